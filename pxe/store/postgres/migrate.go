package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock is the advisory lock key the migrations are applied
// under ("np-schema" in ASCII), so that hosts starting at once wait for
// each other.
const migrationLock int64 = 0x6e702d736368656d

// ErrSchemaTooNew is wrapped by a [*SchemaTooNewError].
var ErrSchemaTooNew = errors.New("the store's schema is newer than this binary knows")

// SchemaTooNewError is [OpenDB]'s refusal of a database a newer binary
// migrated: this one could misread it.
type SchemaTooNewError struct {
	// Found is the database's schema version.
	Found int
	// Known is the newest version this binary knows.
	Known int
}

// Error names both versions.
func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("PostgreSQL store: schema version %d is newer than this binary knows (%d): use a node-provisioner at least as new as the one that migrated it", e.Found, e.Known)
}

// Unwrap returns [ErrSchemaTooNew].
func (e *SchemaTooNewError) Unwrap() error { return ErrSchemaTooNew }

type migration struct {
	version int
	name    string
	sql     string
}

// Migrations returns the embedded migrations' versions and names, oldest
// first.
func Migrations() ([]string, error) {
	ms, err := load(migrations)
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%04d %s", m.version, m.name))
	}
	return out, err
}

// SchemaVersion is the newest schema version this binary knows.
func SchemaVersion() int {
	ms, err := load(migrations)
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

func load(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, n := range names {
		base := strings.TrimSuffix(path.Base(n), ".sql")
		num, name, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: the name must start with its version, as 0001_name.sql", n)
		}
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(data)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %04d %s: want version %d (no gaps, no repeats)", m.version, m.name, i+1)
		}
	}
	return out, nil
}

// migrate applies the migrations the database lacks, each in a
// transaction, holding the advisory lock on one connection.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := load(migrations)
	if err != nil {
		return fmt.Errorf("PostgreSQL store: %w", err)
	}
	return db.apply(ctx, ms)
}

func (db *DB) apply(ctx context.Context, ms []migration) error {
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConnect, err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return fmt.Errorf("PostgreSQL store: take the schema lock: %w", err)
	}
	defer func() {
		// A context that ended leaves the lock to the connection's end.
		if _, err := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock); err != nil {
			conn.Conn().Close(ctx)
		}
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS np_schema (
		version integer NOT NULL, name text NOT NULL, applied timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (version))`); err != nil {
		return fmt.Errorf("PostgreSQL store: create the schema table: %w", err)
	}
	var found int
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM np_schema").Scan(&found); err != nil {
		return fmt.Errorf("PostgreSQL store: read the schema version: %w", err)
	}
	known := 0
	if len(ms) > 0 {
		known = ms[len(ms)-1].version
	}
	if found > known {
		return &SchemaTooNewError{Found: found, Known: known}
	}
	for _, m := range ms[found:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO np_schema (version, name) VALUES ($1, $2)", m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("PostgreSQL store: migration %04d %s: %w", m.version, m.name, err)
		}
		db.Log.Info("PostgreSQL store migrated", "version", m.version, "migration", m.name)
	}
	return nil
}
