package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// maxReport bounds a report kept: the webhook's body it comes from is
// bounded at 1 MiB, and what is kept of it is smaller.
const maxReport = 1 << 20

// Installs keeps the installers' reports ([registry.Installs]) in
// PostgreSQL, a row per registration name, so that the report a node's
// installer posted to one host is seen by every host; safe for
// concurrent use. It keeps what it is given and checks only the name.
type Installs struct{ db *DB }

var _ registry.Installs = (*Installs)(nil)

// OpenInstalls returns the install reports of db.
func OpenInstalls(db *DB) *Installs { return &Installs{db: db} }

// Put keeps in, replacing the report of its name.
func (s *Installs) Put(ctx context.Context, in registry.Install) error {
	if err := registry.ValidateName(in.Name); err != nil {
		return fmt.Errorf("keep install report: %w", err)
	}
	data, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("keep install report of %s: %w", in.Name, err)
	}
	if len(data) > maxReport {
		return fmt.Errorf("keep install report of %s: %d bytes, more than %d", in.Name, len(data), maxReport)
	}
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	if _, err := s.db.Pool.Exec(ctx, `INSERT INTO np_installs (name, data) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET data = EXCLUDED.data`, in.Name, string(data)); err != nil {
		return fmt.Errorf("keep install report of %s: %w", in.Name, s.db.Check(err))
	}
	return nil
}

// Get returns the report of name, or an error wrapping
// [registry.ErrNoInstall].
func (s *Installs) Get(ctx context.Context, name string) (registry.Install, error) {
	if registry.ValidateName(name) != nil {
		return registry.Install{}, fmt.Errorf("install report of %q: %w", name, registry.ErrNoInstall)
	}
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	var data string
	err := s.db.Pool.QueryRow(ctx, "SELECT data FROM np_installs WHERE name = $1", name).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return registry.Install{}, fmt.Errorf("install report of %s: %w", name, registry.ErrNoInstall)
	}
	if err != nil {
		return registry.Install{}, fmt.Errorf("install report of %s: %w", name, s.db.Check(err))
	}
	return decodeInstall(name, data)
}

func decodeInstall(name, data string) (registry.Install, error) {
	var in registry.Install
	if err := json.Unmarshal([]byte(data), &in); err != nil {
		return registry.Install{}, fmt.Errorf("install report of %s (postgres np_installs): %w", name, err)
	}
	if in.Name != name {
		return registry.Install{}, fmt.Errorf("install report of %s (postgres np_installs): names %q", name, in.Name)
	}
	return in, nil
}

// List returns the reports sorted by name; a row that cannot be read is
// an error naming it.
func (s *Installs) List(ctx context.Context) ([]registry.Install, error) {
	ctx, cancel := s.db.Bound(ctx)
	defer cancel()
	rows, err := s.db.Pool.Query(ctx, `SELECT name, data FROM np_installs ORDER BY name COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("list install reports: %w", s.db.Check(err))
	}
	var out []registry.Install
	var name, data string
	_, err = pgx.ForEachRow(rows, []any{&name, &data}, func() error {
		in, err := decodeInstall(name, data)
		out = append(out, in)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list install reports: %w", s.db.Check(err))
	}
	return out, nil
}
