// Command node-provisioner hands the Proxmox VE automated installer a
// per-node answer.toml, once, to registered machines only.
//
// It does not edit the project's platform or node files; plasma-node does
// that.
package main
