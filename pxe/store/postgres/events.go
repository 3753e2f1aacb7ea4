package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// Defaults of [EventsOptions].
const (
	// DefaultMaxBytes bounds the events kept, in bytes of their JSON.
	DefaultMaxBytes = 64 << 20
	// DefaultPoll is how often a follower looks for events when no
	// notification came (one lost with a connection).
	DefaultPoll = time.Second
)

// eventsChannel is the NOTIFY channel of appends.
const eventsChannel = "np_events"

// appendLock is the advisory lock appends take ("np-event" in ASCII).
const appendLock int64 = 0x6e702d6576656e74

// EventsOptions tune [OpenEvents].
type EventsOptions struct {
	// MaxBytes bounds the events kept; 0 means [DefaultMaxBytes].
	MaxBytes int64
	// Poll is a follower's fallback poll; 0 means [DefaultPoll].
	Poll time.Duration
}

// Events keeps node-provisioner's events ([events.Store]) in
// PostgreSQL: a table whose bigserial id is the event's id, so every
// host's events are in one order, and a NOTIFY on each append that
// wakes every follower (LISTEN) on every host at once. Safe for
// concurrent use, and for any number of hosts appending to one
// database.
//
// Appends are serialised by an advisory lock, so ids are committed in
// their order and a reader resuming after an id never skips one that
// commits later. The table is bounded: once its events hold more than
// the bound, the oldest are dropped down to half of it.
type Events struct {
	db   *DB
	opts EventsOptions
}

var _ events.Store = (*Events)(nil)

// OpenEvents returns the events of db.
func OpenEvents(db *DB, o EventsOptions) *Events {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	return &Events{db: db, opts: o}
}

// MaxBytes returns the bound of the events kept.
func (s *Events) MaxBytes() int64 { return s.opts.MaxBytes }

// Append adds evs, in order, in one transaction that notifies the
// followers when it commits.
func (s *Events) Append(ctx context.Context, evs ...events.Event) error {
	if len(evs) == 0 {
		return nil
	}
	data := make([]string, len(evs))
	sizes := make([]int32, len(evs))
	var total int64
	for i, e := range evs {
		if e.Time.IsZero() {
			e.Time = time.Now()
		}
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("append event: %w", err)
		}
		data[i], sizes[i] = string(b), int32(len(b))
		total += int64(len(b))
	}
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", appendLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO np_events (data, size)
			SELECT d, z FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS q(d, z, n) ORDER BY n`, data, sizes); err != nil {
			return err
		}
		var bytes int64
		if err := tx.QueryRow(ctx, "UPDATE np_events_total SET bytes = bytes + $1 RETURNING bytes", total).Scan(&bytes); err != nil {
			return err
		}
		if bytes > s.opts.MaxBytes {
			if err := trimEvents(ctx, tx, bytes-s.opts.MaxBytes/2); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, "SELECT pg_notify($1, '')", eventsChannel)
		return err
	})
	if err != nil {
		return fmt.Errorf("append events: %w", s.db.Check(err))
	}
	return nil
}

// trimEvents drops the oldest events holding at least excess bytes.
func trimEvents(ctx context.Context, tx pgx.Tx, excess int64) error {
	var dropped int64
	err := tx.QueryRow(ctx, `WITH cut AS (
			SELECT id FROM (SELECT id, sum(size) OVER (ORDER BY id) AS c FROM np_events) x
			WHERE c >= $1 ORDER BY id LIMIT 1),
		gone AS (DELETE FROM np_events WHERE id <= (SELECT id FROM cut) RETURNING size)
		SELECT coalesce(sum(size), 0) FROM gone`, excess).Scan(&dropped)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "UPDATE np_events_total SET bytes = bytes - $1", dropped)
	return err
}

// parseEventID returns the event number of id: 0 for "", -1 for FromNow.
func parseEventID(id string) (int64, error) {
	switch id {
	case "":
		return 0, nil
	case events.FromNow:
		return -1, nil
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < 1 || strconv.FormatInt(n, 10) != id {
		return 0, fmt.Errorf("event id %q: %w", id, events.ErrBadID)
	}
	return n, nil
}

// startEvents resolves after to the number to read after, checking that the
// store gave it.
func startEvents(ctx context.Context, q querier, after string) (int64, error) {
	n, err := parseEventID(after)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	var last int64
	if err := q.QueryRow(ctx, "SELECT coalesce((SELECT last_value FROM np_events_id_seq WHERE is_called), 0)").Scan(&last); err != nil {
		return 0, fmt.Errorf("read events: %w", err)
	}
	if n < 0 {
		return last, nil
	}
	if n > last {
		return 0, fmt.Errorf("event id %q: %w", after, events.ErrBadID)
	}
	return n, nil
}

func readEvents(ctx context.Context, q querier, after int64, max int) ([]events.Record, error) {
	limit := int64(max)
	if max <= 0 {
		limit = -1
	}
	rows, err := q.Query(ctx, "SELECT id, data FROM np_events WHERE id > $1 ORDER BY id LIMIT nullif($2, -1)", after, limit)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	var out []events.Record
	var id int64
	var data string
	_, err = pgx.ForEachRow(rows, []any{&id, &data}, func() error {
		var e events.Event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return fmt.Errorf("event %d: %w", id, err)
		}
		out = append(out, events.Record{ID: strconv.FormatInt(id, 10), Event: e})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return out, nil
}

// Read returns up to max events after the event of id, oldest first.
func (s *Events) Read(ctx context.Context, after string, max int) ([]events.Record, error) {
	n, err := startEvents(ctx, s.db.Pool, after)
	if err != nil {
		return nil, s.db.Check(err)
	}
	if after == events.FromNow {
		return nil, nil
	}
	recs, err := readEvents(ctx, s.db.Pool, n, max)
	return recs, s.db.Check(err)
}

// followBatch is how many events a follower reads at once.
const followBatch = 500

// Follow calls fn with each event after the event of id, then with each
// one appended later (by any host), until ctx ends or fn fails. It holds
// one connection that LISTENs for the appends' notifications. When the
// database cannot be reached it tries again (every poll interval, up to
// every 5 s) and goes on after the last event it gave, with no event
// lost or given twice.
func (s *Events) Follow(ctx context.Context, after string, fn func(events.Record) error) error {
	last := int64(-2) // not resolved yet
	wait := s.opts.Poll
	for {
		err := s.follow(ctx, after, &last, fn)
		var fe fnError
		if errors.As(err, &fe) {
			return fe.err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !Unavailable(err) {
			return err
		}
		s.db.Log.Warn("events: the store is unavailable; following again", "err", s.db.Check(err), "in", wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// fnError is fn's own error, which ends Follow as it is.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// follow is one connection's part of Follow: it resolves after into
// *last once, then reads and waits until an error.
func (s *Events) follow(ctx context.Context, after string, last *int64, fn func(events.Record) error) (err error) {
	conn, err := s.db.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("follow events: %w", err)
	}
	clean := false
	defer func() {
		if !clean {
			// A connection left listening or mid-wait goes, not back.
			// Close says goodbye to the server, which may be gone: bounded.
			cctx, cancel := s.db.Bound(context.Background())
			defer cancel()
			_ = conn.Hijack().Close(cctx)
			return
		}
		conn.Release()
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+eventsChannel); err != nil {
		return fmt.Errorf("follow events: %w", err)
	}
	if *last == -2 {
		if *last, err = startEvents(ctx, conn, after); err != nil {
			return err
		}
	}
	for {
		recs, err := readEvents(ctx, conn, *last, followBatch)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := fn(r); err != nil {
				return fnError{err}
			}
			*last, _ = strconv.ParseInt(r.ID, 10, 64)
		}
		if len(recs) == followBatch {
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, s.opts.Poll)
		err = conn.Conn().PgConn().WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("follow events: %w", err)
		}
	}
}
