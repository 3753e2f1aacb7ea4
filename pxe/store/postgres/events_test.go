package postgres_test

import (
	"context"
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
	conns := map[events.Store]string{}
	open := func(t eventstest.T, conn string, maxBytes int64) events.Store {
		db, err := postgres.OpenDB(context.Background(), conn, postgres.DBOptions{})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(db.Close)
		s := postgres.OpenEvents(db, postgres.EventsOptions{MaxBytes: maxBytes})
		conns[s] = conn
		return s
	}
	eventstest.Run(t, eventstest.Harness{
		New: func(t eventstest.T, maxBytes int64) events.Store {
			return open(t, srv.NewDatabase(t.(testing.TB)), maxBytes)
		},
		Writer: func(t eventstest.T, s events.Store) events.Store {
			return open(t, conns[s], s.(*postgres.Events).MaxBytes())
		},
	})
	t.Run("NotifyWakesAFollowerOnAnotherHost", func(t *testing.T) { notifyWakes(t, srv) })
}
