package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
	"github.com/plasmactl/plasma-node/pxe/window"
	"github.com/plasmactl/plasma-node/pxe/window/windowtest"
)

func openSiteWindow(t testing.TB, conn string) *postgres.SiteWindow {
	db, err := postgres.OpenDB(context.Background(), conn, postgres.DBOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(db.Close)
	return postgres.OpenSiteWindow(db)
}

// TestSiteWindowConformance runs the site window's suite on a real
// PostgreSQL, a database per check, Other a second pool (host) on it.
func TestSiteWindowConformance(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	conns := map[window.SiteStore]string{}
	var mu sync.Mutex
	windowtest.Run(t, windowtest.Harness{
		NewSite: func(st windowtest.T) window.SiteStore {
			t := st.(testing.TB) // the suite runs on a *testing.T here
			conn := srv.NewDatabase(t)
			s := openSiteWindow(t, conn)
			mu.Lock()
			conns[s] = conn
			mu.Unlock()
			return s
		},
		OtherSite: func(st windowtest.T, s window.SiteStore) window.SiteStore {
			mu.Lock()
			defer mu.Unlock()
			return openSiteWindow(st.(testing.TB), conns[s])
		},
	})
	t.Run("OfManyHostsOpeningAtOnceOneWins", func(t *testing.T) { oneWins(t, srv.NewDatabase(t)) })
}

// oneWins: 16 opens on 4 pools at once: exactly one is recorded.
func oneWins(t *testing.T, conn string) {
	var stores []*postgres.SiteWindow
	for range 4 {
		stores = append(stores, openSiteWindow(t, conn))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range 16 {
		wg.Go(func() {
			now := time.Now().UTC()
			err := stores[i%4].Open(context.Background(), window.Site{Opened: now, Deadline: now.Add(time.Hour)})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				won++
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Errorf("%d opens won, want 1", won)
	}
}
