// Package pgreplies keeps the management API's idempotency records
// ([api.Replies]) in PostgreSQL: the reply of each POST by the SHA-256 of
// its Idempotency-Key, kept a day, so that a repeat sent to any host
// (also after a restart) gets the same reply. The requests of one key
// wait for each other across hosts: [Store.Lock] holds an advisory lock
// of the key on a connection of its own.
package pgreplies
