// Package storetest is the conformance suite of [registry.Registrations]:
// every implementation runs it (the state folder's, package pxe/store/folder, in
// its tests, a database store in its own, an embedder's store in the
// embedder's), in the manner of tailscale's ipn/store/storetest.
//
// [Run] runs each check as a subtest of a *testing.T; [Checks] lists them,
// so that a test can feed one a deliberately broken store and see it fail.
package storetest
