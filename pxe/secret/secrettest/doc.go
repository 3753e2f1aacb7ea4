// Package secrettest is the conformance suite of [secret.Store], the
// store of the nodes' secrets: every implementation runs it (the secrets
// folder's, package pxe/store/folder's Secrets, in go test ./...; an embedder's own the same
// way), by [Run] with a [Harness] that makes stores of it.
//
// It checks that a BMC password reads back as written and reads as none
// (an error wrapping fs.ErrNotExist) once removed; that a refused
// password is kept nowhere and never quoted in an error; that a staged
// root password is kept only once committed, and is gone when discarded;
// that every kept secret is private to its owner (mode 0600 in a 0700
// folder, for files) and none is left behind once removed; and that
// concurrent writers leave one whole password, never a torn one.
package secrettest
