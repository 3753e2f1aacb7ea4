package api_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/idempotency"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// memWindow is a window.Store in memory, as an embedder keeping window
// state elsewhere would give one.
type memWindow struct{ rec *window.Record }

func (m *memWindow) Read(context.Context) (*window.Record, error) {
	if m.rec == nil {
		return nil, fs.ErrNotExist
	}
	return m.rec, nil
}
func (m *memWindow) Write(_ context.Context, w *window.Record) error { m.rec = w; return nil }
func (m *memWindow) Remove(context.Context, int) error               { m.rec = nil; return nil }
func (m *memWindow) Holder(context.Context) (*window.HeldError, error) {
	return nil, nil
}

// TestWindowStatusFromTheWindowStore: the API shows the window its
// window store holds, not a file it reads behind it.
func TestWindowStatusFromTheWindowStore(t *testing.T) {
	ctx := t.Context()
	mw := &memWindow{}
	e := newEnv(t, func(c *api.Config) { c.Window = mw })
	read := e.tokens["read"]
	if r := e.do(t, "GET", "/api/v1/window", read, ""); r.status != 200 || !strings.Contains(r.body, `"open":false`) {
		t.Fatalf("no window: %d %s", r.status, r.body)
	}
	now := time.Now().UTC()
	mw.Write(ctx, &window.Record{PID: os.Getpid(), HTTP: "192.0.2.1:8443", Started: now, Deadline: now.Add(time.Hour)})
	if r := e.do(t, "GET", "/api/v1/window", read, ""); r.status != 200 || !strings.Contains(r.body, `"open":true`) || !strings.Contains(r.body, "192.0.2.1:8443") {
		t.Errorf("the store's window: %d %s", r.status, r.body)
	}
}

// memReplies is an idempotency.Store in memory, as an embedder keeping its
// idempotency records elsewhere would give one.
type memReplies struct {
	mu   sync.Mutex
	keys sync.Map
	kept map[string]idempotency.Reply
}

func (m *memReplies) Lock(_ context.Context, key string) func() {
	l, _ := m.keys.LoadOrStore(key, &sync.Mutex{})
	l.(*sync.Mutex).Lock()
	return l.(*sync.Mutex).Unlock
}

func (m *memReplies) Get(_ context.Context, key string) (*idempotency.Reply, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.kept[key]; ok {
		return &r, nil
	}
	return nil, nil
}

func (m *memReplies) Put(_ context.Context, key string, r idempotency.Reply) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kept == nil {
		m.kept = map[string]idempotency.Reply{}
	}
	m.kept[key] = r
	return nil
}

// TestTheAPITakesItsStores: given the idempotency records and the window
// state as stores, the API keeps nothing in the state folder; without
// either it refuses to start.
func TestTheAPITakesItsStores(t *testing.T) {
	ctx := t.Context()
	replies := &memReplies{}
	var cfg api.Config
	e := newEnv(t, func(c *api.Config) {
		c.Replies, c.Window = replies, &memWindow{}
		cfg = *c
	})
	if r := e.do(t, "POST", "/api/v1/registrations", e.tokens["register"], pve1, "Idempotency-Key", "k1"); r.status != 201 {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	if _, err := replies.Get(ctx, "k1"); err != nil || len(replies.kept) != 1 {
		t.Errorf("the reply was not kept in the Replies store: %v %v", replies.kept, err)
	}
	if _, err := os.Stat(filepath.Join(e.state, "api", "idempotency")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the state folder has idempotency records: %v", err)
	}
	if r := e.do(t, "GET", "/api/v1/window", e.tokens["read"], ""); r.status != 200 || !strings.Contains(r.body, `"open":false`) {
		t.Errorf("window: %d %s", r.status, r.body)
	}
	for name, tc := range map[string]struct {
		c    api.Config
		want string
	}{
		"no Replies": {api.Config{Window: &memWindow{}}, "Replies"},
		"no Window":  {api.Config{Replies: replies}, "Window"},
	} {
		tc.c.Registry, tc.c.Tokens, tc.c.Events = cfg.Registry, cfg.Tokens, cfg.Events
		if _, err := api.New(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
