package postgres_test

import (
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
	pg := newHandles[registry.Registrations](srv)
	storetest.Run(t, storetest.Harness{
		New: func(t storetest.T) registry.Registrations {
			return pg.open(t, "", func(db *postgres.DB) registry.Registrations { return postgres.OpenRegistrations(db, nil) })
		},
		Reopen: pg.again,
	})
	t.Run("ConsumeOnceAcrossHosts", func(t *testing.T) { consumeAcrossHosts(t, srv) })
	t.Run("KilledConsumerLeavesItPending", func(t *testing.T) { killedConsumer(t, srv) })
}
