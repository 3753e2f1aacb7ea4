// Command quickstart runs plasma-node's main job on embedded defaults in a
// temporary folder: it scaffolds a platform, registers nodes (their private
// IPs allocated from the platform's pool), allocates zones kubectl-style
// and lists the result; then it provisions a bare-metal platform (provider
// pxe: a machine of the pool's hardware list registered with
// node-provisioner), serves answers on loopback, posts the system info a
// Proxmox VE 9.2 installer sends, prints the one answer it gets, and
// lists the node as consumed. It leaves nothing behind unless -keep is
// given.
package main
