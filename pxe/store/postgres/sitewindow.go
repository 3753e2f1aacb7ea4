package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// windowChannel is the notification channel of the window's changes.
const windowChannel = "np_site_window"

// maxRecord bounds a record read, as the state folder's.
const maxRecord = 64 << 10

// maxHosts bounds the hosts listed.
const maxHosts = 256

// listenRetry is how long a listener that lost its connection waits
// before it listens again.
const listenRetry = time.Second

// SiteWindow keeps the site's window ([window.SiteStore]) in a
// PostgreSQL store, shared by every provisioner host of the site: the
// window in np_site_window (one row, whose changes a trigger notifies on
// the np_site_window channel), the hosts in np_site_hosts. Safe for
// concurrent use.
type SiteWindow struct{ db *DB }

var _ window.SiteStore = (*SiteWindow)(nil)

// OpenSiteWindow returns the site's window of db.
func OpenSiteWindow(db *DB) *SiteWindow { return &SiteWindow{db: db} }

// Read returns the recorded window, nil for none.
func (s *SiteWindow) Read(ctx context.Context) (*window.Site, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	var data string
	err := s.db.Pool.QueryRow(ctx, "SELECT data FROM np_site_window WHERE id = 1").Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("site window: %w", s.db.Check(err))
	}
	return decodeWindow(data)
}

func decodeWindow(data string) (*window.Site, error) {
	if len(data) > maxRecord {
		return nil, fmt.Errorf("site window (np_site_window): %d bytes, more than %d", len(data), maxRecord)
	}
	var w window.Site
	if err := json.Unmarshal([]byte(data), &w); err != nil {
		return nil, fmt.Errorf("site window (np_site_window): %w", err)
	}
	return &w, nil
}

// Open records w unless a window is open at w.Opened: one statement, so
// of hosts opening at once exactly one wins.
func (s *SiteWindow) Open(ctx context.Context, w window.Site) error {
	data, err := json.Marshal(w)
	if err != nil {
		return err
	}
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	tag, err := s.db.Pool.Exec(ctx, `INSERT INTO np_site_window (id, deadline, data) VALUES (1, $1, $2)
		ON CONFLICT (id) DO UPDATE SET deadline = EXCLUDED.deadline, data = EXCLUDED.data
		WHERE np_site_window.deadline <= $3`, w.Deadline, string(data), w.Opened)
	if err != nil {
		return fmt.Errorf("open the site window: %w", s.db.Check(err))
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	cur, err := s.Read(ctx)
	if err != nil {
		return err
	}
	if cur == nil { // closed meanwhile: name what is known
		cur = &window.Site{}
	}
	return &window.OpenError{Current: *cur}
}

// Close removes the recorded window, reporting whether it was open.
func (s *SiteWindow) Close(ctx context.Context) (bool, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	var open bool
	err := s.db.Pool.QueryRow(ctx, "DELETE FROM np_site_window WHERE id = 1 RETURNING deadline > $1", time.Now()).Scan(&open)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("close the site window: %w", s.db.Check(err))
	}
	return open, nil
}

// End removes the recorded window if it is still w.
func (s *SiteWindow) End(ctx context.Context, w window.Site) error {
	cur, err := s.Read(ctx)
	if err != nil || cur == nil || !cur.Same(&w) {
		return err
	}
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	// The deadline and the opening in the row name this window.
	if _, err := s.db.Pool.Exec(ctx, "DELETE FROM np_site_window WHERE id = 1 AND deadline = $1 AND data::jsonb->>'opened' = $2",
		w.Deadline, cur.Opened.Format(time.RFC3339Nano)); err != nil {
		return fmt.Errorf("end the site window: %w", s.db.Check(err))
	}
	return nil
}

// Advertise records h, replacing the host of its name.
func (s *SiteWindow) Advertise(ctx context.Context, h window.Host) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	if _, err := s.db.Pool.Exec(ctx, `INSERT INTO np_site_hosts (name, seen, data) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET seen = EXCLUDED.seen, data = EXCLUDED.data`, h.Name, h.Seen, string(data)); err != nil {
		return fmt.Errorf("advertise the host: %w", s.db.Check(err))
	}
	return nil
}

// Hosts returns the hosts seen at or after since, by name.
func (s *SiteWindow) Hosts(ctx context.Context, since time.Time) ([]window.Host, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	rows, err := s.db.Pool.Query(ctx, "SELECT data FROM np_site_hosts WHERE seen >= $1 ORDER BY name LIMIT $2", since, maxHosts)
	if err != nil {
		return nil, fmt.Errorf("site hosts: %w", s.db.Check(err))
	}
	datas, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("site hosts: %w", s.db.Check(err))
	}
	var out []window.Host
	for _, d := range datas {
		var h window.Host
		if len(d) > maxRecord {
			return nil, fmt.Errorf("site hosts (np_site_hosts): a record of %d bytes, more than %d", len(d), maxRecord)
		}
		if err := json.Unmarshal([]byte(d), &h); err != nil {
			return nil, fmt.Errorf("site hosts (np_site_hosts): %w", err)
		}
		out = append(out, h)
	}
	return out, nil
}

// Changes listens on a connection of its own for the window's
// notifications until ctx ends; when the connection fails it listens
// again a second later (a change missed meanwhile is the poll's).
func (s *SiteWindow) Changes(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	go func() {
		for ctx.Err() == nil {
			err := s.listen(ctx, ch)
			if ctx.Err() != nil {
				return
			}
			s.db.Log.Debug("site window: listening again", "err", s.db.Check(err), "in", listenRetry)
			select {
			case <-ctx.Done():
			case <-time.After(listenRetry):
			}
		}
	}()
	return ch
}

func (s *SiteWindow) listen(ctx context.Context, ch chan struct{}) error {
	actx, cancel := s.db.Bound(ctx)
	pc, err := s.db.Pool.Acquire(actx)
	cancel()
	if err != nil {
		return err
	}
	conn := pc.Hijack() // left listening, it never goes back to the pool
	defer func() {
		// Close says goodbye to the server, which may be gone: bounded.
		cctx, cancel := s.db.Bound(context.WithoutCancel(ctx))
		defer cancel()
		_ = conn.Close(cctx)
	}()
	lctx, cancel := s.db.Bound(ctx)
	_, err = conn.Exec(lctx, "LISTEN "+windowChannel)
	cancel()
	if err != nil {
		return err
	}
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
