package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestFollowOutlivesAnOutage: a follower whose database stops and
// comes back goes on by itself, and gets the events appended after,
// none twice; an append during the outage fails with ErrUnavailable.
func TestFollowOutlivesAnOutage(t *testing.T) {
	srv := pgtest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := postgres.OpenDB(ctx, srv.NewDatabase(t), postgres.DBOptions{Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	s := postgres.OpenEvents(db, postgres.EventsOptions{Poll: 100 * time.Millisecond})
	if err := s.Append(ctx, events.Event{Kind: events.Answer, Node: "before"}); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 16)
	done := make(chan error, 1)
	go func() {
		done <- s.Follow(ctx, "", func(r events.Record) error { got <- r.Event.Node; return nil })
	}()
	if n := <-got; n != "before" {
		t.Fatalf("followed %q first, want before", n)
	}
	srv.Stop(t)
	if err := s.Append(ctx, events.Event{Kind: events.Answer, Node: "lost"}); !errors.Is(err, postgres.ErrUnavailable) {
		t.Errorf("Append with the database stopped = %v, want ErrUnavailable", err)
	}
	time.Sleep(500 * time.Millisecond) // the follower finds it gone
	srv.Restart(t)
	var appendErr error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if appendErr = s.Append(ctx, events.Event{Kind: events.Answer, Node: "after"}); appendErr == nil {
			break
		}
	}
	if appendErr != nil {
		t.Fatalf("Append after the restart: %v", appendErr)
	}
	select {
	case n := <-got:
		if n != "after" {
			t.Errorf("after the outage the follower got %q, want after", n)
		}
	case err := <-done:
		t.Fatalf("Follow ended with %v, want it to go on", err)
	case <-time.After(15 * time.Second):
		t.Fatal("the follower got nothing within 15 s of the database's return")
	}
	select {
	case n := <-got:
		t.Errorf("then %q, want nothing more", n)
	case <-time.After(300 * time.Millisecond):
	}
}
