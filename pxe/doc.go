// Package pxe serves a provisioning window: one [Server] that answers the
// Proxmox VE installer over HTTP and stops by itself when its TTL runs out.
//
// The answer logic itself lives in package answer; this package only
// listens, routes and enforces the window. Proxy-DHCP and TFTP are not
// part of it yet.
package pxe
