// Package zones handles Plasma zone paths such as
// platform.foundation.cluster.control: it validates and normalises them,
// parses zone:type:count specs and kubectl-style allocation operations
// (X adds, X- removes, old/new replaces), and reads the optional
// topology.yaml tree in the plasmactl-zone format.
//
// It does not read or write node files or platform.yaml, and apart from
// [LoadTopology] it does no I/O: callers hand it strings and get strings
// back.
package zones
