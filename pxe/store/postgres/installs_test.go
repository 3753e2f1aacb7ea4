package postgres_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/registry/installtest"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestInstallsConformance runs the install reports' suite on a real
// PostgreSQL, a database per check; Reopen is a second pool, as a
// restarted process or another host opens it.
func TestInstallsConformance(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	pg := newHandles[registry.Installs](srv)
	open := func(db *postgres.DB) registry.Installs { return postgres.OpenInstalls(db) }
	installtest.Run(t, installtest.Harness{
		New:    func(t installtest.T) registry.Installs { return pg.open(t, "", open) },
		Reopen: pg.again,
	})
	t.Run("AReportPostedToOneHostIsSeenByAnother", func(t *testing.T) {
		conn := srv.NewDatabase(t)
		a, b := pg.open(t, conn, open), pg.open(t, conn, open)
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
