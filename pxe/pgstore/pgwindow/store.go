package pgwindow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plasmactl/plasma-node/pxe/pgstore"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// windowLock is the advisory lock of the window ("np-windw" in ASCII).
const windowLock int64 = 0x6e702d77696e6477

// maxRecord bounds a window record read, as the state folder's.
const maxRecord = 64 << 10

// Store is the window state of a PostgreSQL store; safe for concurrent
// use, also by several hosts on one database.
type Store struct{ db *pgstore.DB }

var _ window.Store = (*Store)(nil)

// Open returns the window state of db.
func Open(db *pgstore.DB) *Store { return &Store{db: db} }

// Read returns the window's record; none is an error wrapping
// fs.ErrNotExist.
func (s *Store) Read() (*window.Record, error) {
	ctx, cancel := s.db.Context()
	defer cancel()
	var data string
	err := s.db.Pool.QueryRow(ctx, "SELECT data FROM np_window WHERE id = 1").Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("window record: %w", fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("window record: %w", s.db.Check(err))
	}
	if len(data) > maxRecord {
		return nil, fmt.Errorf("window record (postgres np_window): %d bytes, more than %d", len(data), maxRecord)
	}
	var w window.Record
	if err := json.Unmarshal([]byte(data), &w); err != nil {
		return nil, fmt.Errorf("window record (postgres np_window): %w", err)
	}
	return &w, nil
}

// Write records w, replacing the record.
func (s *Store) Write(w *window.Record) error {
	data, err := json.Marshal(w)
	if err != nil {
		return err
	}
	ctx, cancel := s.db.Context()
	defer cancel()
	if _, err := s.db.Pool.Exec(ctx, `INSERT INTO np_window (id, pid, data) VALUES (1, $1, $2)
		ON CONFLICT (id) DO UPDATE SET pid = EXCLUDED.pid, data = EXCLUDED.data`, w.PID, string(data)); err != nil {
		return fmt.Errorf("write window record: %w", s.db.Check(err))
	}
	return nil
}

// Remove removes the record if it is still process pid's.
func (s *Store) Remove(pid int) error {
	ctx, cancel := s.db.Context()
	defer cancel()
	if _, err := s.db.Pool.Exec(ctx, "DELETE FROM np_window WHERE id = 1 AND pid = $1", pid); err != nil {
		return fmt.Errorf("remove window record: %w", s.db.Check(err))
	}
	return nil
}

// holderSQL selects the holder whose session holds the lock now.
const holderSQL = `SELECT h.pid, h.host, h.http, h.since FROM np_window_holder h
	WHERE h.id = 1 AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
		AND l.pid = h.backend_pid AND l.objsubid = 1
		AND l.classid::bigint = ($1::bigint >> 32) AND l.objid::bigint = ($1::bigint & 4294967295))`

// Holder returns the window holding the lock, nil for none.
func (s *Store) Holder() (*window.HeldError, error) {
	ctx, cancel := s.db.Context()
	defer cancel()
	return s.holder(ctx, s.db.Pool)
}

type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (s *Store) holder(ctx context.Context, q rowQuerier) (*window.HeldError, error) {
	var h window.HeldError
	var host string
	err := q.QueryRow(ctx, holderSQL, windowLock).Scan(&h.PID, &host, &h.HTTP, &h.Since)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("window lock: %w", s.db.Check(err))
	}
	h.StateDir = s.db.Name() + " (host " + host + ")"
	return &h, nil
}

// Lock is the window lock, held on a connection of its own until Unlock
// or the connection's end.
type Lock struct {
	s    *Store
	conn *pgx.Conn
}

// Lock takes the window lock for a window of this process that will
// serve on addr, or returns a [*window.HeldError] (matching
// [window.ErrOpen]) naming the window holding it.
func (s *Store) Lock(ctx context.Context, addr string) (*Lock, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	pc, err := s.db.Pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("window lock: %w", s.db.Check(err))
	}
	conn := pc.Hijack()
	fail := func(err error) (*Lock, error) {
		_ = conn.Close(context.Background())
		return nil, err
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", windowLock).Scan(&got); err != nil {
		return fail(fmt.Errorf("window lock: %w", s.db.Check(err)))
	}
	if !got {
		held, err := s.holder(ctx, conn)
		if err == nil && held == nil {
			// Taken between its holder's row and the lock: name what is known.
			held = &window.HeldError{StateDir: s.db.Name(), HTTP: "(unknown)"}
		}
		if err != nil {
			return fail(err)
		}
		return fail(held)
	}
	host, _ := os.Hostname()
	if _, err := conn.Exec(ctx, `INSERT INTO np_window_holder (id, backend_pid, pid, host, http, since)
		VALUES (1, pg_backend_pid(), $1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET backend_pid = EXCLUDED.backend_pid, pid = EXCLUDED.pid,
			host = EXCLUDED.host, http = EXCLUDED.http, since = EXCLUDED.since`,
		os.Getpid(), host, addr, time.Now().UTC()); err != nil {
		return fail(fmt.Errorf("window lock: %w", s.db.Check(err)))
	}
	return &Lock{s: s, conn: conn}, nil
}

// Relabel names the address the window listens on, once bound.
func (l *Lock) Relabel(addr string) error {
	ctx, cancel := l.s.db.Context()
	defer cancel()
	if _, err := l.conn.Exec(ctx, "UPDATE np_window_holder SET http = $1 WHERE id = 1 AND backend_pid = pg_backend_pid()", addr); err != nil {
		return fmt.Errorf("window lock: %w", l.s.db.Check(err))
	}
	return nil
}

// Unlock lets the lock go (ending its session, which also does when the
// database cannot be reached).
func (l *Lock) Unlock() error {
	ctx, cancel := l.s.db.Context()
	defer cancel()
	_, err := l.conn.Exec(ctx, "DELETE FROM np_window_holder WHERE id = 1 AND backend_pid = pg_backend_pid()")
	if cerr := l.conn.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("window unlock: %w", l.s.db.Check(err))
	}
	return nil
}
