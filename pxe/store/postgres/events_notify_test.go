package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// notifyWakes: with the fallback poll an hour long, a follower on one
// host gets an event appended on another within a second: the NOTIFY
// woke it.
func notifyWakes(t *testing.T, srv *pgtest.Server) {
	conn := srv.NewDatabase(t)
	var hosts []*postgres.Events
	for range 2 {
		db, err := postgres.OpenDB(context.Background(), conn, postgres.DBOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		hosts = append(hosts, postgres.OpenEvents(db, postgres.EventsOptions{Poll: time.Hour}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan events.Record, 1)
	done := make(chan error, 1)
	go func() {
		done <- hosts[0].Follow(ctx, events.FromNow, func(r events.Record) error { got <- r; return nil })
	}()
	time.Sleep(200 * time.Millisecond) // listening
	start := time.Now()
	if err := hosts[1].Append(context.Background(), events.Event{Kind: events.Answer, Node: "other-host"}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.Event.Node != "other-host" {
			t.Errorf("followed %+v, want other-host's event", r.Event)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("the follower got the event after %v, want under a second (NOTIFY)", d)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("the follower got nothing within 5 s of another host's append")
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Follow ended with %v, want context.Canceled", err)
	}
}
