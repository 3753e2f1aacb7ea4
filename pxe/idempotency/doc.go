// Package idempotency is the contract of the management API's
// idempotency records: the reply of each POST by its Idempotency-Key,
// kept a day ([TTL]), so that a repeat (also after a restart, or sent to
// another host of the site) gets the same reply. Package pxe/store/folder
// keeps them in the state folder, package pxe/store/postgres in
// PostgreSQL, and package idempotencytest is the conformance suite both
// pass.
//
// It serves nothing: the API (package pxe/api) decides what a repeat
// gets, and package pxe/store opens the store it takes.
package idempotency
