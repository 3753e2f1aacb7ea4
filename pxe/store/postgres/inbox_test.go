package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/discovery/discoverytest"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestInboxConformance runs the inbox's suite on a real PostgreSQL, a
// database per check; Reopen is a second pool, as a restarted process or
// another host opens it.
func TestInboxConformance(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	pg := newHandles[discovery.Store](srv)
	inbox := func(l discovery.Limits) func(*postgres.DB) discovery.Store {
		return func(db *postgres.DB) discovery.Store { return postgres.OpenInbox(db, l) }
	}
	discoverytest.Run(t, discoverytest.Harness{
		New:    func(t discoverytest.T, l discovery.Limits) discovery.Store { return pg.open(t, "", inbox(l)) },
		Reopen: pg.again,
	})

	t.Run("AMachinePostedToOneHostIsListedByAnother", func(t *testing.T) {
		conn := srv.NewDatabase(t)
		a, b := pg.open(t, conn, inbox(discovery.Limits{})), pg.open(t, conn, inbox(discovery.Limits{}))
		t0 := time.Date(2026, 12, 5, 7, 0, 0, 0, time.UTC)
		put, err := a.Put(context.Background(), discoverytest.Report("52:54:00:aa:00:01", "SRV-1", "DISK-1"), t0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.List(context.Background(), t0.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]discovery.Record{put}, got); diff != "" {
			t.Errorf("host B's List (-posted to A +listed by B):\n%s", diff)
		}
		rec, err := discovery.Lookup(context.Background(), b, "SRV-1", t0.Add(time.Minute))
		if err != nil || rec.ID != put.ID {
			t.Errorf("host B's Lookup of the serial: %v, %v; want %s", rec.ID, err, put.ID)
		}
		if err := b.Remove(context.Background(), put.ID); err != nil {
			t.Fatalf("host B's Remove: %v", err)
		}
		if got, err := a.List(context.Background(), t0.Add(time.Minute)); err != nil || len(got) != 0 {
			t.Errorf("host A's List after B removed the entry: %v, %v; want none", got, err)
		}
	})

	t.Run("RacingPostsFromTwoHosts", func(t *testing.T) {
		conn := srv.NewDatabase(t)
		const max = 8
		hosts := []discovery.Store{pg.open(t, conn, inbox(discovery.Limits{Max: max})), pg.open(t, conn, inbox(discovery.Limits{Max: max}))}
		t0 := time.Date(2026, 12, 5, 7, 0, 0, 0, time.UTC)
		// 20 posters, each posting through both hosts at once, four
		// times, from either of its two NICs; posters 16..19 hold the
		// DMI serials of posters 0..3 (other NICs of the same chassis):
		// 16 machines, of which the bound keeps 8, none twice.
		report := func(i, try int) discovery.Report {
			serial := fmt.Sprint("CHASSIS-", i%16)
			nic := fmt.Sprintf("52:54:00:bb:%02x:%02x", i, try%2)
			return discoverytest.Report(nic, serial, "")
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		kept, full := map[string]bool{}, 0
		var other []error
		for i := range 20 {
			for try := range 4 {
				wg.Go(func() {
					rec, err := hosts[try%2].Put(context.Background(), report(i, try), t0.Add(time.Duration(try)*time.Second))
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						kept[rec.ID] = true
					case errors.Is(err, discovery.ErrFull):
						full++
					default:
						other = append(other, err)
					}
				})
			}
		}
		wg.Wait()
		if len(other) > 0 {
			t.Fatalf("racing posts failed: %v", other)
		}
		now := t0.Add(time.Minute)
		for h, s := range hosts {
			got, err := s.List(context.Background(), now)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != max {
				t.Errorf("host %d lists %d entries, want the bound %d", h, len(got), max)
			}
			serials := map[string]string{}
			for _, r := range got {
				if prev, ok := serials[r.DMI.Serial]; ok {
					t.Errorf("host %d lists serial %s twice: %s and %s", h, r.DMI.Serial, prev, r.ID)
				}
				serials[r.DMI.Serial] = r.ID
				if !kept[r.ID] {
					t.Errorf("host %d lists %s, which no post was told it kept", h, r.ID)
				}
			}
		}
		if full == 0 {
			t.Errorf("no post was refused as full: 16 machines in an inbox of %d", max)
		}
	})
}
