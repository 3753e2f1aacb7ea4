// Package pxe is the bare-metal provider: a pool's servers are machines
// of a hardware list, registered with node-provisioner (one registration
// per node) so that the Proxmox VE installer they
// network-boot gets their answer. It implements [providers.Direct]: no
// OpenTofu is involved, and plasma-node provision, list and destroy call
// it directly.
//
// The registrations go where the platform's [providers.Location] says: a
// node-provisioner state folder on this host ([LocalRegistry]), or
// node-provisioner's management API on the site's host (its Go client,
// package pxe/client), chosen by infrastructure.provisioner_url.
//
// It does not serve anything: node-provisioner's window (package
// github.com/plasmactl/plasma-node/pxe) answers the machines.
package pxe
