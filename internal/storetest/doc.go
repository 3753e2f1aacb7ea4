// Package storetest is the harness the stores' conformance suites share:
// a suite's checks run as subtests of a test, or one at a time on a
// [Recorder], so that the suite's own test can see a check fail a
// deliberately broken store.
//
// It holds no check of its own: each suite (pxe/secret/secrettest,
// pxe/registry/storetest, …) keeps its checks and its harness type beside
// the contract it checks, and takes from here what checks share
// ([NoError], [Race]) and its broken-store self-test ([RejectsFaults]).
package storetest
