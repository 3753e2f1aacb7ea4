// Package registry is node-provisioner's registration store and the
// window backend built on it: registrations of expected machines as JSON
// files in TAPPaaS's format ([Store]: put, get, delete, list, consume
// once, safe across processes and crashes), the matching interlock that
// picks a registration for an installer's request ([Match]), answers
// built from a registration and the site's settings ([Build], [Site]),
// generated per-node root passwords (package secret/secretfile, 0600 in a 0700
// folder), first-boot scripts, and the event log.
//
// [Backend] answers a provisioning window (package pxe) from a Store: it
// implements [backend.Backend] and its optional interfaces. It does not
// listen on the network or render answers itself; package answer is the
// installer's format, package pxe the window.
package registry
