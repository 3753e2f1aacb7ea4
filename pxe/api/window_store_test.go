package api_test

import (
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// memWindow is a window.Store in memory, as an embedder keeping window
// state elsewhere would give one.
type memWindow struct{ rec *window.Record }

func (m *memWindow) Read() (*window.Record, error) {
	if m.rec == nil {
		return nil, fs.ErrNotExist
	}
	return m.rec, nil
}
func (m *memWindow) Write(w *window.Record) error { m.rec = w; return nil }
func (m *memWindow) Remove(int) error             { m.rec = nil; return nil }
func (m *memWindow) Holder() (*window.HeldError, error) {
	return nil, nil
}

// TestWindowStatusFromTheWindowStore: the API shows the window its
// window store holds, not a file it reads behind it.
func TestWindowStatusFromTheWindowStore(t *testing.T) {
	mw := &memWindow{}
	e := newEnv(t, func(c *api.Config) { c.Window = mw })
	read := e.tokens["read"]
	if r := e.do(t, "GET", "/api/v1/window", read, ""); r.status != 200 || !strings.Contains(r.body, `"open":false`) {
		t.Fatalf("no window: %d %s", r.status, r.body)
	}
	now := time.Now().UTC()
	mw.Write(&window.Record{PID: os.Getpid(), HTTP: "192.0.2.1:8443", Started: now, Deadline: now.Add(time.Hour)})
	if r := e.do(t, "GET", "/api/v1/window", read, ""); r.status != 200 || !strings.Contains(r.body, `"open":true`) || !strings.Contains(r.body, "192.0.2.1:8443") {
		t.Errorf("the store's window: %d %s", r.status, r.body)
	}
}
