package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// handles opens the stores S of a conformance harness on srv, each on a
// pool closed when its check ends, and remembers how each was opened, so
// that another pool can open it again, as another host or a restarted
// process would.
type handles[S comparable] struct {
	srv    *pgtest.Server
	mu     sync.Mutex
	opened map[S]opened[S]
}

type opened[S any] struct {
	conn  string
	db    *postgres.DB
	build func(*postgres.DB) S
}

func newHandles[S comparable](srv *pgtest.Server) *handles[S] {
	return &handles[S]{srv: srv, opened: map[S]opened[S]{}}
}

// open opens a pool on conn (a new database when conn is "") and the
// store build makes on it.
func (h *handles[S]) open(t storetest.T, conn string, build func(*postgres.DB) S) S {
	t.Helper()
	if conn == "" {
		conn = h.srv.NewDatabase(t.(testing.TB))
	}
	db, err := postgres.OpenDB(context.Background(), conn, postgres.DBOptions{})
	storetest.NoError(t, err, "open")
	t.Cleanup(db.Close)
	s := build(db)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.opened[s] = opened[S]{conn, db, build}
	return s
}

// again opens s again on a pool of its own.
func (h *handles[S]) again(t storetest.T, s S) S {
	t.Helper()
	return h.open(t, h.of(s).conn, h.of(s).build)
}

func (h *handles[S]) of(s S) opened[S] {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.opened[s]
}
