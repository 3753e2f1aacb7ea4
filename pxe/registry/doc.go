// Package registry is node-provisioner's registrations and the window
// backend built on them: the registration of an expected machine and its
// file format (TAPPaaS's JSON), the store interface that keeps them
// ([Registrations]: register with pins, get, delete, scan, consume once,
// mark delivered, re-arm; package registry/regfile is the state folder's
// implementation, registry/storetest the suite every implementation
// runs), the matching interlock that picks a registration for an
// installer's request ([Match]), answers built from a registration and the
// site's settings ([Build], [Site]), and first-boot scripts.
//
// [Backend] answers a provisioning window (package pxe) from a
// [Registrations] store: it implements [backend.Backend] and its optional
// interfaces. It does not listen on the network or render answers itself;
// package answer is the installer's format, package pxe the window.
package registry
