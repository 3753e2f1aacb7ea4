// Command quickstart runs plasma-node's main job on embedded defaults in a
// temporary folder: it scaffolds a platform, registers nodes (their private
// IPs allocated from the platform's pool), allocates zones kubectl-style
// and lists the result; then it registers a bare-metal node with
// node-provisioner's library, serves answers on loopback, posts the
// system info a Proxmox VE 9.2 installer sends and prints the one answer
// it gets. It leaves nothing behind unless -keep is given.
package main
