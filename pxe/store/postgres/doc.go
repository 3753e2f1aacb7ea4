// Package postgres keeps node-provisioner's stores in PostgreSQL, for a
// site whose provisioner hosts share one store, and offers it as the
// site store: [Register] adds its opener ([Open]) to a [store.Openers],
// under the postgres:// and postgresql:// schemes, and the opener gives
// the stores below on one connection pool ([Stores]).
//
// One file per store, each named for what it keeps: [Registrations],
// [Events], [Tokens], [Replies] (the API's idempotency records),
// [SiteWindow], [Installs] (the installers' reports), [Secrets] (sealed
// with a key kept on each host) and [Inbox] (the discovery inbox). Each
// takes a [*DB] and passes its contract's conformance suite.
//
// [OpenDB] opens a pool on a connection string and applies the schema's
// migrations (embedded in the binary, versioned, under an advisory lock
// so that several hosts starting at once apply each migration once), and
// refuses a database whose schema is newer than this binary knows
// ([SchemaTooNewError]). Every call is bounded: connecting and each
// statement by [DBOptions].Timeout, on the server too (statement, lock
// and idle transaction timeouts). A call that fails for want of the
// database returns an error matching [ErrUnavailable] ([DB.Check]). The
// connection string holds a password: this package never puts it in an
// error or a log ([Redact]).
//
// Only a program that offers a PostgreSQL store imports it (the daemon,
// node-provisioner): pxe/store itself links no database driver, so
// plasma-node, the API client and an embedder's window never link pgx.
package postgres
