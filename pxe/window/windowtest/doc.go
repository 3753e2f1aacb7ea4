// Package windowtest is the conformance suite of [window.Store], the
// store of a state's window: every implementation runs it (the state
// folder's, [window.Dir], in go test ./...; an embedder's own the same
// way), by [Run] with a [Harness] that makes stores of it.
//
// It checks that no window reads as none (an error wrapping
// fs.ErrNotExist, and no holder); that a record round-trips whole, its
// deadline (or none) included; that a removed window reads as none while
// a newer window's record is left alone; that concurrent writers and
// readers see whole records only; and that the window holding the lock
// is named by Holder until it lets go.
package windowtest
