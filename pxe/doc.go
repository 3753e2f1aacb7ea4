// Package pxe runs a provisioning window: one [Server] that does the
// whole of node-provisioner's network boot and answering, from one
// [Config] and one [Server.Serve] call. With a DHCP interface it answers
// PXE and HTTP-boot clients by proxy-DHCP (UDP 67 and 4011, leaving the
// site's DHCP server alone) and serves the iPXE binaries by TFTP; over
// HTTP(S) it serves the iPXE script, the boot assets, the installer's
// answer, first-boot script and webhook, a status page, metrics and the
// boot timeline; it records itself in the state folder, runs the site's
// DHCP hook, and stops everything together when its TTL runs out or its
// context ends.
//
// What each machine boots and gets is asked of a [backend.Backend], the
// seam a program embedding the window owns and gives it in [Config].Backend:
// node-provisioner's registrations (package pxe/backend/regbackend, which
// pxe/daemon and cmd/node-provisioner wire to their stores) are one
// implementation, a site inventory another (see examples/embed-pxe).
// [Enable] and [Disable] run a window in the background; [window.Record] is its
// record. Package bootassets turns a Proxmox VE installer ISO into boot
// assets.
//
// The roles live in subpackages, each usable alone: proxydhcp (the pure
// reply encoding), dhcpserver (its sockets), tftp, netboot (the HTTP
// side), bootassets (prepare, ISO 9660, cpio), tlscert (the certificate)
// and backend (the seam's types). This package assembles them; it does
// not decide who installs what. Around the window: api (the management
// API over HTTPS), apitoken (its scoped bearer tokens), daemon (the
// long-running service that serves the API and runs the windows it
// opens) and client (the API's Go client).
package pxe
