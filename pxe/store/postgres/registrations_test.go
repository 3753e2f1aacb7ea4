package postgres_test

import (
	"context"
	"testing"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/registry/storetest"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestRegistrationsConformance runs the registrations' conformance suite on
// a real PostgreSQL, a database per check; a second handle is a second
// pool, as a restarted process or another host opens it. CrashConsume is
// nil: Consume is one transaction, a killed consumer's is rolled back
// (KilledConsumerLeavesItPending shows it). One cluster serves every
// check of the registrations.
func TestRegistrationsConformance(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	handles := map[registry.Registrations]string{}
	open := func(t storetest.T, conn string) registry.Registrations {
		db, err := postgres.OpenDB(context.Background(), conn, postgres.DBOptions{})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		if c, ok := t.(interface{ Cleanup(func()) }); ok {
			c.Cleanup(db.Close)
		}
		s := postgres.OpenRegistrations(db, nil)
		handles[s] = conn
		return s
	}
	storetest.Run(t, storetest.Harness{
		New: func(st storetest.T) registry.Registrations {
			return open(st, srv.NewDatabase(st.(testing.TB)))
		},
		Reopen: func(st storetest.T, s registry.Registrations) registry.Registrations {
			return open(st, handles[s])
		},
	})
	t.Run("ConsumeOnceAcrossHosts", func(t *testing.T) { consumeAcrossHosts(t, srv) })
	t.Run("KilledConsumerLeavesItPending", func(t *testing.T) { killedConsumer(t, srv) })
}
