// Package backend declares the seam between a provisioning window
// (package pxe) and the inventory behind it: which machines may boot, what
// each one installs, what answer its installer gets, and what happened.
//
// A window asks a [Backend] and nothing else; node-provisioner's
// registrations (package pxe/backend/regbackend) are one implementation,
// and a program that keeps its machines elsewhere (a database, an API, a
// Kubernetes resource) writes its own. The optional interfaces
// [Recorder], [Inventory], [OneShot], [SecureBooter] and [Starter] add
// the event log, the status page's node list, the installer's first-boot
// and webhook calls, the Secure Boot chain, and a start under the
// window's lock.
//
// It declares types only: it does no I/O, serves nothing and stores
// nothing.
package backend
