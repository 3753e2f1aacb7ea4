package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// maxEntry bounds one row's JSON, as the folder's inbox bounds each of
// its entries: a report is at most [discovery.MaxReportBytes].
const maxEntry = 2*discovery.MaxReportBytes + 512

// Inbox keeps the discovery inbox ([discovery.Store]) in PostgreSQL, a
// row per discovered machine, so that a machine posted to one host is
// listed by every host of the store; safe for concurrent use. Each post
// applies the rule of [discovery.Put] (one entry per machine, matched by
// a shared MAC or a real DMI serial; expiry; the bound) in one
// transaction holding a lock on the table, so that posts racing from
// several hosts are applied one at a time.
type Inbox struct {
	db     *DB
	limits discovery.Limits
}

var _ discovery.Store = (*Inbox)(nil)

// OpenInbox returns the inbox of db, bounded by l (zero fields take
// discovery's defaults).
func OpenInbox(db *DB, l discovery.Limits) *Inbox {
	return &Inbox{db: db, limits: l.WithDefaults()}
}

// Put records report as seen at now by the rule of [discovery.Put], in
// one transaction that locks the inbox against other writers: of posts
// racing from any number of hosts, each sees the ones before it.
func (s *Inbox) Put(ctx context.Context, report discovery.Report, now time.Time) (discovery.Record, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	var rec discovery.Record
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		// SHARE ROW EXCLUSIVE conflicts with itself and with every
		// write, not with reads: List goes on while a post is applied.
		if _, err := tx.Exec(ctx, "LOCK TABLE np_discovered IN SHARE ROW EXCLUSIVE MODE"); err != nil {
			return err
		}
		recs, err := s.read(ctx, tx)
		if err != nil {
			return err
		}
		out, r, err := discovery.Put(recs, report, now, s.limits)
		if err != nil {
			return err
		}
		rec = r
		return s.write(ctx, tx, recs, out, r)
	})
	if err != nil {
		return discovery.Record{}, s.fail("keep a discovered machine", err)
	}
	return rec, nil
}

// write makes the table hold out, the entries of recs kept by a post,
// of which rec is the one posted.
func (s *Inbox) write(ctx context.Context, tx pgx.Tx, recs, out []discovery.Record, rec discovery.Record) error {
	keep := make(map[string]bool, len(out))
	for _, r := range out {
		keep[r.ID] = true
	}
	var gone []string
	for _, r := range recs {
		if !keep[r.ID] {
			gone = append(gone, r.ID)
		}
	}
	if len(gone) > 0 {
		if _, err := tx.Exec(ctx, "DELETE FROM np_discovered WHERE id = ANY($1)", gone); err != nil {
			return err
		}
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if len(data) > maxEntry {
		return fmt.Errorf("discovery: %w: an entry of %d bytes, more than %d", discovery.ErrInvalid, len(data), maxEntry)
	}
	_, err = tx.Exec(ctx, `INSERT INTO np_discovered (id, last_seen, data) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO UPDATE SET last_seen = EXCLUDED.last_seen, data = EXCLUDED.data`, rec.ID, rec.LastSeen, string(data))
	return err
}

// List returns the entries live at now, oldest first.
func (s *Inbox) List(ctx context.Context, now time.Time) ([]discovery.Record, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	recs, err := s.read(ctx, s.db.Pool)
	if err != nil {
		return nil, s.fail("list discovered machines", err)
	}
	return discovery.Live(recs, now, s.limits), nil
}

// Remove removes the entry with id; an error wrapping
// [discovery.ErrNotFound] when there is none.
func (s *Inbox) Remove(ctx context.Context, id string) error {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	tag, err := s.db.Pool.Exec(ctx, "DELETE FROM np_discovered WHERE id = $1", id)
	if err != nil {
		return s.fail("remove a discovered machine", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("discovery: %w with ID %q", discovery.ErrNotFound, id)
	}
	return nil
}

// read returns every row's entry, expired or not. It reads no more rows
// than the bound lets the table hold (a post keeps at most the bound),
// nor a row longer than an entry can be; more rows, or a row that cannot
// be read, is an error naming it.
func (s *Inbox) read(ctx context.Context, q querier) ([]discovery.Record, error) {
	rows, err := q.Query(ctx, `SELECT id, data FROM np_discovered ORDER BY id COLLATE "C" LIMIT $1`, s.limits.Max+1)
	if err != nil {
		return nil, err
	}
	var out []discovery.Record
	var id, data string
	_, err = pgx.ForEachRow(rows, []any{&id, &data}, func() error {
		if len(data) > maxEntry {
			return fmt.Errorf("discovery inbox (postgres np_discovered): the entry %q holds %d bytes, more than %d", id, len(data), maxEntry)
		}
		var r discovery.Record
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			return fmt.Errorf("discovery inbox (postgres np_discovered): the entry %q: %w", id, err)
		}
		if r.ID != id {
			return fmt.Errorf("discovery inbox (postgres np_discovered): the entry %q names %q", id, r.ID)
		}
		if len(out) == s.limits.Max {
			return fmt.Errorf("discovery inbox (postgres np_discovered): more than %d entries, this host's bound; was it filled by a host with a larger one?", s.limits.Max)
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// fail wraps err of what: an outage as the store's unavailable error,
// the inbox's own errors as they are.
func (s *Inbox) fail(what string, err error) error {
	return fmt.Errorf("%s: %w", what, s.db.Check(err))
}

// Import keeps recs as they are (their IDs, reports and times), as a
// copy of another store's inbox: one transaction, holding the lock of a
// post. An entry whose ID the inbox holds, or more entries than the bound
// lets it hold, is refused and nothing is kept.
func (s *Inbox) Import(ctx context.Context, recs []discovery.Record) error {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "LOCK TABLE np_discovered IN SHARE ROW EXCLUSIVE MODE"); err != nil {
			return err
		}
		held, err := s.read(ctx, tx)
		if err != nil {
			return err
		}
		if len(held)+len(recs) > s.limits.Max {
			return fmt.Errorf("discovery: %w: %d entries and %d held, more than %d", discovery.ErrFull, len(recs), len(held), s.limits.Max)
		}
		for _, r := range recs {
			data, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if len(data) > maxEntry || len(r.NICs) == 0 {
				return fmt.Errorf("discovery: %w: the entry %q", discovery.ErrInvalid, r.ID)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO np_discovered (id, last_seen, data) VALUES ($1, $2, $3)", r.ID, r.LastSeen, string(data)); err != nil {
				return fmt.Errorf("the entry %q: %w", r.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return s.fail("import discovered machines", err)
	}
	return nil
}
