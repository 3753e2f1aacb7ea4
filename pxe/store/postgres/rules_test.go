package postgres_test

import (
	"testing"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/enrol/enroltest"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestRulesConformance runs the rule store's suite on a real PostgreSQL,
// a database per check; another handle is a second pool, as another
// host opens the store, so the races run across two hosts.
func TestRulesConformance(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	pg := newHandles[enrol.Store](srv)
	build := func(db *postgres.DB) enrol.Store { return postgres.OpenRules(db) }
	enroltest.Run(t, enroltest.Harness{
		New:     func(t enroltest.T) enrol.Store { return pg.open(t, "", build) },
		Another: pg.again,
	})
}
