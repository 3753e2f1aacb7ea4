package api_test

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/plasmactl/plasma-node/internal/netnstest"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// TestGetWindowOnAReadOnlyStateFolder: GET /window reads the window's
// lock without taking it, so on a read-only state folder (the state of
// a full one) it still answers 200, closed. The test binary runs again
// in a mount namespace where the folder turns read-only.
func TestGetWindowOnAReadOnlyStateFolder(t *testing.T) {
	if dir := os.Getenv("PN_API_RO_STATE"); dir != "" {
		// The child, in its own mount namespace where dir is bound on
		// itself: the API opens its stores, then the folder turns
		// read-only under it (as a full or failing disk does).
		e := newEnvAt(t, dir, os.Getenv("PN_API_RO_TOKEN"))
		if err := syscall.Mount(dir, dir, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			t.Fatalf("remount read-only: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "probe"), nil, 0o600); err == nil {
			t.Fatal("the state folder is writable in the child")
		}
		r := e.do(t, "GET", "/api/v1/window", e.tokens["read"], "")
		var st struct{ Open bool }
		if r.status != 200 || json.Unmarshal([]byte(r.body), &st) != nil || st.Open {
			t.Fatalf("GET /window on a read-only state folder: %d %s, want 200 closed", r.status, r.body)
		}
		return
	}
	if os.Geteuid() != 0 {
		netnstest.Missing(t, "a read-only bind mount needs root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		netnstest.Missing(t, "the read-only bind mount needs unshare from util-linux")
	}
	e := newEnv(t, nil)
	// A window ran here once: its lock file stays.
	if err := os.WriteFile(filepath.Join(e.state, window.LockName), []byte("gone (pid 1, since 2026-01-01T00:00:00Z)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(e.state, window.LockName))
	c := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
		`mount --bind "$PN_API_RO_STATE" "$PN_API_RO_STATE" && exec "$0" -test.run '^TestGetWindowOnAReadOnlyStateFolder$' -test.count=1`, os.Args[0])
	c.Env = append(os.Environ(), "PN_API_RO_STATE="+e.state, "PN_API_RO_TOKEN="+e.tokens["read"])
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("the read-only child: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(filepath.Join(e.state, window.LockName)); string(after) != string(before) {
		t.Errorf("GET /window rewrote the window's lock file: %q, was %q", after, before)
	}
}

// newEnvAt is newEnv over an existing state folder whose read token is
// given: it writes nothing.
func newEnvAt(t *testing.T, dir, readToken string) *env {
	t.Helper()
	e := &env{state: dir, tokens: map[string]string{"read": readToken}, logs: &syncBuffer{}}
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg, err := folder.OpenRegistrations(dir, log)
	if err != nil {
		t.Fatal(err)
	}
	if e.store, err = folder.OpenTokens(dir, log); err != nil {
		t.Fatal(err)
	}
	h, err := api.New(api.Config{Window: folder.Window(dir), Registry: reg, Tokens: e.store, Replies: &memReplies{}, Logger: log, Events: folder.OpenEvents(folder.EventsPath(dir), folder.EventsOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	e.ts = httptest.NewTLSServer(h)
	t.Cleanup(e.ts.Close)
	return e
}
