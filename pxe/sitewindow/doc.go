// Package sitewindow is the site's provisioning window as a store: the
// desired state every provisioner host of the site follows (open until a
// deadline, its Secure Boot and discovery settings, who opened it and
// when), and the hosts that follow it, each advertising itself (its API,
// its HTTP address and answer URL, whether it serves, when last seen).
//
// A daemon opens and closes the window through its [Store]; each daemon
// of the site watches the store ([Store.Changes], with a bounded poll
// beside it) and starts or stops its own servers to match. The record of
// the process serving on one host (its pid, addresses and lock) stays in
// that host's state folder (package window): it is what status and
// disable on the host read.
//
// [Dir] is the state folder's store (one host: the daemon's API folder
// holds the record, window.json); package pxe/store/postgres keeps the window in
// PostgreSQL for several hosts. Package sitewindowtest is the
// conformance suite both pass.
package sitewindow
