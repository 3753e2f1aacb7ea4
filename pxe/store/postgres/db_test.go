package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestDB runs the connection's checks on one real cluster, a
// database each.
func TestDB(t *testing.T) {
	srv := pgtest.Start(t)
	t.Run("MigratesOnceUnderTheLock", func(t *testing.T) { migratesOnce(t, srv) })
	t.Run("RefusesANewerSchema", func(t *testing.T) { refusesNewerSchema(t, srv) })
	t.Run("ErrorsHoldNoPassword", func(t *testing.T) { errorsHoldNoPassword(t, srv) })
}

// migratesOnce: eight hosts opening a new database at once apply each
// migration once, and all end on this binary's version.
func migratesOnce(t *testing.T, srv *pgtest.Server) {
	conn := srv.NewDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			db, err := postgres.OpenDB(context.Background(), conn, postgres.DBOptions{MaxConns: 2})
			if err == nil {
				db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i, err)
		}
	}
	db, err := postgres.OpenDB(context.Background(), conn, postgres.DBOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, max int
	if err := db.Pool.QueryRow(context.Background(), "SELECT count(*), max(version) FROM np_schema").Scan(&n, &max); err != nil {
		t.Fatal(err)
	}
	ms, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if n != len(ms) || max != postgres.SchemaVersion() || max < 1 {
		t.Errorf("np_schema holds %d versions up to %d; want each of the %d migrations once, up to %d", n, max, len(ms), postgres.SchemaVersion())
	}
}

// refusesNewerSchema: a database a newer binary migrated is refused,
// naming its version and this binary's.
func refusesNewerSchema(t *testing.T, srv *pgtest.Server) {
	conn := srv.NewDatabase(t)
	db, err := postgres.OpenDB(context.Background(), conn, postgres.DBOptions{})
	if err != nil {
		t.Fatal(err)
	}
	newer := postgres.SchemaVersion() + 5
	if _, err := db.Pool.Exec(context.Background(), "INSERT INTO np_schema (version, name) VALUES ($1, 'from_the_future')", newer); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = postgres.OpenDB(context.Background(), conn, postgres.DBOptions{})
	var tooNew *postgres.SchemaTooNewError
	if !errors.Is(err, postgres.ErrSchemaTooNew) || !errors.As(err, &tooNew) || tooNew.Found != newer || tooNew.Known != postgres.SchemaVersion() {
		t.Fatalf("Open of a newer schema = %v, want a SchemaTooNewError of %d over %d", err, newer, postgres.SchemaVersion())
	}
	for _, v := range []int{newer, postgres.SchemaVersion()} {
		if !strings.Contains(err.Error(), fmt.Sprintf("%d", v)) {
			t.Errorf("the refusal %q does not name version %d", err, v)
		}
	}
}

// errorsHoldNoPassword: refusals of a bad setting or an unreachable or
// wrong database name the store without its password.
func errorsHoldNoPassword(t *testing.T, srv *pgtest.Server) {
	const pw = pgtest.Password
	tests := []struct {
		conn   string
		target error
	}{
		{conn: fmt.Sprintf("postgres://postgres:%s@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", pw), target: postgres.ErrConnect},
		{conn: fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/no_such_db?sslmode=disable", pw, srv.Port), target: postgres.ErrConnect},
		{conn: fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/x?sslmode=bogus", pw, srv.Port)},
		{conn: fmt.Sprintf("host=127.0.0.1 port=1 password=%s connect_timeout=2 sslmode=disable", pw), target: postgres.ErrConnect},
	}
	for _, tc := range tests {
		_, err := postgres.OpenDB(context.Background(), tc.conn, postgres.DBOptions{})
		if err == nil || (tc.target != nil && !errors.Is(err, tc.target)) {
			t.Errorf("Open(%s) = %v, want an error matching %v", postgres.Redact(tc.conn), err, tc.target)
			continue
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("Open's error holds the password: %v", err)
		}
	}
	if r := postgres.Redact(tests[0].conn); strings.Contains(r, pw) || !strings.Contains(r, "postgres:xxxxx@127.0.0.1:1") {
		t.Errorf("Redact = %q, want the URL with its password replaced", r)
	}
}
