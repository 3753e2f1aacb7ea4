package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults of [DBOptions].
const (
	// DefaultMaxConns is the pool's size when [DBOptions].MaxConns is 0.
	DefaultMaxConns = 16
	// DefaultTimeout bounds connecting and each statement of the stores
	// when [DBOptions].Timeout is 0.
	DefaultTimeout = 10 * time.Second
)

// DBOptions tune [OpenDB].
type DBOptions struct {
	// MaxConns is the most connections the pool holds; 0 means
	// [DefaultMaxConns].
	MaxConns int32
	// Timeout bounds connecting, migrating and each call of a store,
	// within its caller's context; 0 means [DefaultTimeout].
	Timeout time.Duration
	// Logger receives the logs; nil discards them.
	Logger *slog.Logger
}

// DB is an open PostgreSQL store: a pool of connections to a database
// whose schema is this binary's.
type DB struct {
	// Pool is the connections, for the stores of this package.
	Pool *pgxpool.Pool
	// Log is the logger of [DBOptions].
	Log     *slog.Logger
	timeout time.Duration
	name    string // the connection string without its password
	conn    string // the connection string, for redacting errors
}

// ErrConnect is wrapped by [OpenDB]'s error when the database cannot be
// reached or refuses the connection.
var ErrConnect = errors.New("cannot connect to the PostgreSQL store")

// OpenDB connects to the database connString names (a postgres:// URL or
// key=value settings), checks its schema and applies the migrations it
// lacks. Its errors never hold the connection string's password.
func OpenDB(ctx context.Context, connString string, o DBOptions) (*DB, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL store %s: %s", Redact(connString), redactErr(err, connString))
	}
	cfg.MaxConns = o.MaxConns
	// A statement, a lock wait or a transaction left idle ends within
	// the timeout on the server too.
	ms := fmt.Sprint(o.Timeout.Milliseconds())
	cfg.ConnConfig.RuntimeParams["statement_timeout"] = ms
	cfg.ConnConfig.RuntimeParams["lock_timeout"] = ms
	cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = ms
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > o.Timeout {
		cfg.ConnConfig.ConnectTimeout = o.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %s", ErrConnect, Redact(connString), redactErr(err, connString))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%w %s: %s", ErrConnect, Redact(connString), redactErr(err, connString))
	}
	db := &DB{Pool: pool, Log: o.Logger, timeout: o.Timeout, name: Redact(connString), conn: connString}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the pool.
func (db *DB) Close() { db.Pool.Close() }

// Timeout is the bound of one call of a store (see [DBOptions]).
func (db *DB) Timeout() time.Duration { return db.timeout }

var kvPassword = regexp.MustCompile(`(?i)password\s*=\s*('[^']*'|\S*)`)

// Redact returns connString without its password, to name the store in
// messages: postgres://user:xxxxx@host/db.
func Redact(connString string) string {
	if u, err := url.Parse(connString); err == nil && u.Scheme != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	if strings.Contains(connString, "://") {
		return "(a connection string that is not a valid URL)"
	}
	return kvPassword.ReplaceAllString(connString, "password=xxxxx")
}

// redactErr returns err's words without any password of connString.
func redactErr(err error, connString string) string {
	msg := err.Error()
	for _, pw := range passwords(connString) {
		if pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

func passwords(connString string) []string {
	var out []string
	if u, err := url.Parse(connString); err == nil {
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw, url.QueryEscape(pw), url.PathEscape(pw))
		}
		if pw := u.Query().Get("password"); pw != "" {
			out = append(out, pw)
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatch(connString, -1) {
		out = append(out, strings.Trim(m[1], "'"))
	}
	return out
}

// HasPassword reports whether connString holds a password (in the URL's
// user part, a password parameter or a password= setting).
func HasPassword(connString string) bool {
	for _, pw := range passwords(connString) {
		if pw != "" {
			return true
		}
	}
	return false
}

// querier is a pool, a connection or a transaction: what the stores'
// reads take.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
