// Package discoveryfile keeps the discovery inbox in the state folder:
// one file, discovered.json (0600), rewritten atomically under a lock
// file, so that several processes on the host share it.
//
// It does not decode the agent's post (package discovery does) and is
// opened through package pxe/store, nowhere else.
package discoveryfile
