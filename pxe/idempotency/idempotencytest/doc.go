// Package idempotencytest is the conformance suite of
// [idempotency.Store], the store of the API's idempotency records: every
// implementation runs it (the state folder's, package pxe/store/folder's OpenReplies, in
// go test ./...; PostgreSQL's and an embedder's own the same way), by
// [Run] with a [Harness] that makes stores of it.
//
// It checks what the API's repeat rule needs of a store: a repeat of a
// key finds the first request's reply as it was kept (status, body and
// request hash), also after a restart, so that the same request gets the
// same reply and a different body under the key is refused; keys are
// kept apart; a reply past its day is none; and racing requests of one
// key, each taking [idempotency.Store.Lock], agree on one reply.
package idempotencytest
