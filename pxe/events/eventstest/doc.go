// Package eventstest is the conformance suite of [events.Store]: what
// every event store must do (one order for every reader, resume after an
// id, follow, a size bound, rotation or trimming that loses no event a
// reader has not passed, several writers), run by the file store's tests
// and by any store an embedder writes.
//
// It tests; it holds no store of its own for use outside tests.
package eventstest
