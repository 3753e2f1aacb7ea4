// Package registry is node-provisioner's registrations: the registration
// of an expected machine and its file format (TAPPaaS's JSON), the store
// interfaces that keep them ([Registrations]: register with pins, get,
// delete, scan, consume once, mark delivered, re-arm; [Installs]: what
// each installer reported; package pxe/store/folder is the state
// folder's implementation, registry/storetest the suite every
// implementation runs), the matching interlock that picks a registration
// for an installer's request ([Match]), answers built from a
// registration and the site's settings ([Build], [Site]), and first-boot
// scripts.
//
// It keeps the rules and the contracts, and serves nothing: the window
// backend over them is package pxe/backend/regbackend, the installer's
// format package answer.
package registry
