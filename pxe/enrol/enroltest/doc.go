// Package enroltest is the conformance suite of [enrol.Store]: every
// implementation runs it (the state folder's and PostgreSQL's in their
// tests, an embedder's in the embedder's), on the shared harness of
// package internal/storetest, and its own test runs it against
// deliberately broken stores.
//
// It starts no database and keeps no files itself.
package enroltest
