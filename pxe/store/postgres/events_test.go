package postgres_test

import (
	"testing"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/events/eventstest"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestEventsConformance runs the event stores' suite on a real
// PostgreSQL, a database per case; the second writer is a second pool
// on the same database, as another host opens it.
func TestEventsConformance(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	pg := newHandles[events.Store](srv)
	eventstest.Run(t, eventstest.Harness{
		New: func(t eventstest.T, maxBytes int64) events.Store {
			return pg.open(t, "", func(db *postgres.DB) events.Store {
				return postgres.OpenEvents(db, postgres.EventsOptions{MaxBytes: maxBytes})
			})
		},
		Writer: pg.again,
	})
	t.Run("NotifyWakesAFollowerOnAnotherHost", func(t *testing.T) { notifyWakes(t, srv) })
}
