// Package windowtest is the conformance suite of the window's stores:
// [window.Store], the store of the window serving on a host, and
// [window.SiteStore], the store of the site's window. Every
// implementation runs it (the state folder's, package pxe/store/folder's
// Window and SiteWindow, in go test ./...; PostgreSQL's and an embedder's own
// the same way), by [Run] with a [Harness] that makes stores of it; the
// checks of a store the harness does not make pass unchecked.
//
// Of a host's window it checks that no window reads as none (an error
// wrapping fs.ErrNotExist, and no holder); that a record round-trips
// whole, its deadline (or none) included; that a removed window reads as
// none while a newer window's record is left alone; that concurrent
// writers and readers see whole records only; and that the window
// holding the lock is named by Holder until it lets go.
//
// Of the site's window it checks that none reads as nil; that an opening
// reads back whole and a second is refused naming the first, unless the
// first has passed; that Close and End remove (End its own opening
// only); that hosts are listed by when they were seen; that changes are
// signalled; and that another host sees the window and is refused.
package windowtest
