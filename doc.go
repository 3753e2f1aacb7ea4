// Package plasmanode brings up the machines under a Plasma platform: it
// holds the operations that the plasma-node and node-provisioner binaries,
// and any other Go program, call.
//
// A tour of the packages:
//
//   - [github.com/plasmactl/plasma-node/zones]: zone paths, the optional
//     topology.yaml tree, zone:type:count specs and kubectl-style
//     allocation operations. Pure functions.
//   - [github.com/plasmactl/plasma-node/ipam]: private address pools and
//     deterministic allocation against a set of used addresses.
//   - [github.com/plasmactl/plasma-node/nodes]: the Platform, Pool and Node
//     types and the Store that reads and writes platforms/<p>/platform.yaml
//     and platforms/<p>/nodes/<host>.yaml, keeping what a person wrote.
//   - [github.com/plasmactl/plasma-node/answer]: the Proxmox VE automated
//     installer's answer file, system-info payload, registrations and the
//     one-shot answer handler.
//   - [github.com/plasmactl/plasma-node/pxe]: the provisioning window's
//     server.
//
// This package does not print or exit: it returns values and errors and
// logs through the *slog.Logger it is given.
package plasmanode
