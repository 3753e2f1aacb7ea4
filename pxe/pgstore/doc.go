// Package pgstore is node-provisioner's connection to a PostgreSQL
// store: it opens a pool on a connection string, applies the schema's
// migrations (embedded in the binary, versioned, under an advisory lock
// so that several hosts starting at once apply each migration once), and
// refuses a database whose schema is newer than this binary knows
// ([SchemaTooNewError]).
//
// The stores themselves are in its subpackages, one per store:
// pgregistry (registrations), pgevents (the event log), pgtokens (API
// tokens), pgreplies (idempotency records), pgwindow (the site's window),
// pginstalls (the installers' reports) and pgsecret (the nodes' secrets,
// encrypted with a key kept on each host). They take a [*DB].
//
// Every call is bounded: connecting and each statement by
// [Options].Timeout, on the server too (statement, lock and idle
// transaction timeouts). A call that fails for want of the database
// returns an error matching [ErrUnavailable] ([DB.Check]).
//
// The connection string holds a password: this package never puts it in
// an error or a log ([Redact]).
package pgstore
