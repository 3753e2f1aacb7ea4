package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnavailable is wrapped by a store's error when the database cannot
// be reached or did not answer within the store's timeout: the call did
// nothing the caller can rely on, and may succeed once the database is
// back. The API answers 503 to it.
var ErrUnavailable = errors.New("the PostgreSQL store is unavailable")

// UnavailableError is a store's call that failed for want of the
// database. It matches [ErrUnavailable] and wraps the cause.
type UnavailableError struct {
	// Store names the database, without its password ([Redact]).
	Store string
	// Err is the cause.
	Err error
}

// Error names the store, never its password.
func (e *UnavailableError) Error() string {
	return fmt.Sprintf("PostgreSQL store %s is unavailable: %v", e.Store, e.Err)
}

// Unavailable says so, for callers that match the method rather than
// import this package (the API and the window answer 503 to it).
func (e *UnavailableError) Unavailable() bool { return true }

// Unwrap returns [ErrUnavailable] and the cause.
func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// Unavailable reports whether err is a failure to reach the database (a
// refused or lost connection, a timeout, a server shutting down) rather
// than its answer.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, ErrConnect) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Connection exceptions; admin, crash or cannot-connect-now
		// shutdowns; too many connections; statement or lock timeouts.
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") ||
			pe.Code == "53300" || pe.Code == "57014" || pe.Code == "55P03"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne), pgconn.Timeout(err), pgconn.SafeToRetry(err),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	// pgx's words for a connection it lost or closed.
	msg := err.Error()
	for _, w := range []string{"conn closed", "closed pool", "conn busy", "unexpected EOF", "broken pipe", "connection reset"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// Check returns err as the store's error: an [*UnavailableError] when
// [Unavailable] says so, else err itself. Its words never hold the
// connection string's password.
func (db *DB) Check(err error) error {
	if err == nil || !Unavailable(err) {
		return err
	}
	var ue *UnavailableError
	if errors.As(err, &ue) {
		return err
	}
	return &UnavailableError{Store: db.name, Err: errors.New(redactErr(err, db.conn))}
}

// Name names the store in messages: its connection string without the
// password ([Redact]).
func (db *DB) Name() string { return db.name }

// Bound returns ctx bounded by the store's timeout, for one call.
func (db *DB) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, db.timeout)
}
