// Package discoverytest is the conformance suite of [discovery.Store]:
// every implementation runs it (the state folder's, package
// pxe/store/folder, in its tests; a database store in its own;
// an embedder's in the embedder's), in the manner of package
// pxe/registry/storetest.
//
// [Run] runs each check as a subtest of a *testing.T; [Checks] lists them,
// so that a test can feed one a deliberately broken store and see it fail.
package discoverytest
