// Package deptest checks, for tests, which packages a set of packages links,
// by reading the import graph that `go list -deps` reports, in the manner of
// tailscale's tstest/deptest.
//
// It reads the graph only: it does not look at source text, and it does not
// build or run anything.
package deptest
