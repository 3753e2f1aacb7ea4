// Package backend declares the seam between a provisioning window
// (package pxe) and the inventory behind it: which machines may boot, what
// each one installs, what answer its installer gets, and what happened.
//
// A window asks a [Backend] and nothing else; node-provisioner's file
// registry (package pxe/registry) is one implementation, and a program
// that keeps its machines elsewhere (a database, an API, a Kubernetes
// resource) writes its own. The optional interfaces [Recorder],
// [Inventory] and [OneShot] add the event log, the status page's node
// list and the installer's first-boot and webhook calls.
//
// It declares types only: it does no I/O, serves nothing and stores
// nothing.
package backend
