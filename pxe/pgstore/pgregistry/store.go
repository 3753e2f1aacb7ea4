package pgregistry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/plasmactl/plasma-node/internal/hostname"
	"github.com/plasmactl/plasma-node/pxe/pgstore"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Store is the registrations of a PostgreSQL store. Safe for concurrent
// use, also by several processes and hosts on one database.
type Store struct {
	db  *pgstore.DB
	log *slog.Logger
}

var _ registry.Registrations = (*Store)(nil)

// Open returns the registrations of db; log may be nil (db's then).
func Open(db *pgstore.DB, log *slog.Logger) *Store {
	if log == nil {
		log = db.Log
	}
	return &Store{db: db, log: log}
}

// Where names a row of the store in messages and [registry.Broken].
func Where(table, name string) string { return "postgres " + table + " " + name }

// Get returns the pending registration name.
func (s *Store) Get(ctx context.Context, name string) (registry.Registration, error) {
	if err := registry.ValidateName(name); err != nil {
		return registry.Registration{}, err
	}
	var data string
	err := s.db.Pool.QueryRow(ctx, "SELECT data FROM np_registrations_pending WHERE name = $1", name).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return registry.Registration{}, fmt.Errorf("%w named %q", registry.ErrNotFound, name)
	}
	if err != nil {
		return registry.Registration{}, fmt.Errorf("get registration %s: %w", name, s.db.Check(err))
	}
	return decode(data, name)
}

// Delete removes the pending registration name (and so its pins); a
// consumed record stays.
func (s *Store) Delete(ctx context.Context, name string) error {
	if err := registry.ValidateName(name); err != nil {
		return err
	}
	tag, err := s.db.Pool.Exec(ctx, "DELETE FROM np_registrations_pending WHERE name = $1", name)
	if err != nil {
		return fmt.Errorf("delete registration %s: %w", name, s.db.Check(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w named %q", registry.ErrNotFound, name)
	}
	s.log.Info("registration deleted", "node", name)
	return nil
}

// Scan returns the pending registrations sorted by name, and the rows
// that cannot be decoded (written by another binary, or by hand).
func (s *Store) Scan(ctx context.Context) ([]registry.Registration, []registry.Broken, error) {
	return s.list(ctx, "np_registrations_pending")
}

// Consumed returns the consumed registrations sorted by name, each with
// Consumed set.
func (s *Store) Consumed(ctx context.Context) ([]registry.Registration, error) {
	rs, _, err := s.list(ctx, "np_registrations_consumed")
	for i := range rs {
		if rs[i].Consumed == nil {
			rs[i].Consumed = &registry.ConsumeRecord{}
		}
	}
	return rs, err
}

func (s *Store) list(ctx context.Context, table string) ([]registry.Registration, []registry.Broken, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	rows, err := s.db.Pool.Query(ctx, "SELECT name, data FROM "+table)
	if err != nil {
		return nil, nil, fmt.Errorf("list registrations: %w", s.db.Check(err))
	}
	type row struct{ name, data string }
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		return x, r.Scan(&x.name, &x.data)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list registrations: %w", s.db.Check(err))
	}
	var out []registry.Registration
	var broken []registry.Broken
	for _, x := range all {
		r, err := decode(x.data, x.name)
		if err != nil {
			s.log.Warn("registration cannot be read", "row", Where(table, x.name), "err", err)
			broken = append(broken, registry.Broken{Name: x.name, File: Where(table, x.name), Err: err})
			continue
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return hostname.Compare(out[i].Name, out[j].Name) < 0 })
	sort.Slice(broken, func(i, j int) bool { return broken[i].Name < broken[j].Name })
	return out, broken, nil
}

// encode returns a registration's stored form: the registration file's
// JSON, indented as the folder store writes it.
func encode(r registry.Registration) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encode registration %s: %w", r.Name, err)
	}
	return buf.Bytes(), nil
}

func decode(data, name string) (registry.Registration, error) {
	r, err := registry.DecodeRegistration([]byte(data), name)
	if err != nil {
		return registry.Registration{}, fmt.Errorf("read registration %s: %w", Where("registration", name), err)
	}
	return r, nil
}

// retryable says a transaction lost a race it can run again after:
// a unique pin taken meanwhile, a deadlock, a serialisation failure.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "23505", "40P01", "40001":
		return true
	}
	return false
}

// inTx runs f in a transaction, again (a few times) when it lost a race.
func (s *Store) inTx(ctx context.Context, f func(tx pgx.Tx) error) error {
	var err error
	for range 20 {
		err = pgx.BeginFunc(ctx, s.db.Pool, f)
		if !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}
