package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/registry/installtest"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

func openInstalls(t installtest.T, conn string) *postgres.Installs {
	db, err := postgres.OpenDB(context.Background(), conn, postgres.DBOptions{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if c, ok := t.(interface{ Cleanup(func()) }); ok {
		c.Cleanup(db.Close)
	}
	return postgres.OpenInstalls(db)
}

// TestInstallsConformance runs the install reports' suite on a real
// PostgreSQL, a database per check; Reopen is a second pool, as a
// restarted process or another host opens it.
func TestInstallsConformance(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	var mu sync.Mutex
	conns := map[registry.Installs]string{}
	keep := func(s registry.Installs, conn string) registry.Installs {
		mu.Lock()
		defer mu.Unlock()
		conns[s] = conn
		return s
	}
	installtest.Run(t, installtest.Harness{
		New: func(t installtest.T) registry.Installs {
			conn := srv.NewDatabase(t.(testing.TB))
			return keep(openInstalls(t, conn), conn)
		},
		Reopen: func(t installtest.T, s registry.Installs) registry.Installs {
			mu.Lock()
			conn := conns[s]
			mu.Unlock()
			return keep(openInstalls(t, conn), conn)
		},
	})
	t.Run("AReportPostedToOneHostIsSeenByAnother", func(t *testing.T) {
		conn := srv.NewDatabase(t)
		a, b := openInstalls(t, conn), openInstalls(t, conn)
		in := installtest.Sample("pve1")
		if err := a.Put(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		got, err := b.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]registry.Install{in}, got, cmp.Comparer(func(x, y registry.Install) bool { return cmp.Equal(x.Name, y.Name) && x.Reported.Equal(y.Reported) })); diff != "" {
			t.Errorf("the other host's List (-put +got):\n%s", diff)
		}
	})
}
