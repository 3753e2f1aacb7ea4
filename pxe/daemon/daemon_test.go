package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/window"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/daemon"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// running is a daemon started by start.
type running struct {
	d    *daemon.Daemon
	stop func()
	url  string
}

// start runs a daemon on state with the API and windows on loopback.
func start(t *testing.T, state string) *running {
	t.Helper()
	return startWith(t, state, pxe.Config{HTTPAddr: "127.0.0.1:0"})
}

// startWith runs a daemon on state with the API on loopback and window
// as its windows' settings.
func startWith(t *testing.T, state string, window pxe.Config) *running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(daemon.Config{StateDir: state, Listener: ln, Window: window})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	select {
	case <-d.Ready():
	case err := <-done:
		t.Fatalf("daemon: %v", err)
	}
	stopped := false
	r := &running{d: d, url: "https://" + d.Addr().String(), stop: func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon run: %v", err)
		}
	}}
	t.Cleanup(r.stop)
	return r
}

func adminClient(t *testing.T, state string, r *running) *client.Client {
	t.Helper()
	st, _ := folder.OpenTokens(state, nil)
	tok, err := st.Create(context.Background(), "admin-"+time.Now().Format("150405.000000000"), apitoken.ScopeAdmin, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.Options{URL: r.url, Token: tok, Fingerprint: r.d.Fingerprint(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPlainHTTPIsRefused: plain HTTP to the API's port gets Go's TLS
// server's 400 and no API reply.
func TestPlainHTTPIsRefused(t *testing.T) {
	state := t.TempDir()
	r := start(t, state)
	conn, err := net.Dial("tcp", r.d.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /api/v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer npt_plain\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "Client sent an HTTP request to an HTTPS server") {
		t.Errorf("plain HTTP: %d %s", resp.StatusCode, body)
	}
}

// TestWindowSurvivesRestart: a window opened through the API reopens
// after the daemon restarts, until its deadline; closed through the API
// it stays closed; a deadline that passed while the daemon was down
// keeps it closed.
func TestWindowSurvivesRestart(t *testing.T) {
	state := t.TempDir()
	ctx := context.Background()
	r := start(t, state)
	c := adminClient(t, state, r)
	w, err := c.OpenWindow(ctx, time.Minute)
	if err != nil || !w.Open || !w.Daemon || w.PID != os.Getpid() {
		t.Fatalf("open: %+v %v", w, err)
	}
	deadline := w.Deadline
	if _, err := c.OpenWindow(ctx, time.Minute); !errors.Is(err, window.ErrOpen) {
		t.Errorf("second open: %v", err)
	}
	// Another process's window on the folder is refused while it is open.
	other, _ := pxe.New(pxe.Config{StateDir: state, HTTPAddr: "127.0.0.1:0", TTL: time.Minute})
	if err := other.Serve(ctx); !errors.Is(err, window.ErrOpen) {
		t.Errorf("serve beside the daemon's window: %v", err)
	}
	r.stop()
	if _, err := os.Stat(filepath.Join(state, apitoken.DirName, window.FileName)); err != nil {
		t.Fatalf("the record went with the stop: %v", err)
	}

	r = start(t, state)
	c = adminClient(t, state, r)
	w, err = c.Window(ctx)
	if d := w.Deadline.Sub(deadline); err != nil || !w.Open || !w.Daemon || d < -time.Second || d > time.Second {
		t.Fatalf("after restart: %+v %v (deadline %s)", w, err, deadline)
	}
	if err := c.CloseWindow(ctx); err != nil {
		t.Fatal(err)
	}
	if w, err := c.Window(ctx); err != nil || w.Open {
		t.Errorf("after close: %+v %v", w, err)
	}
	r.stop()
	r = start(t, state)
	c = adminClient(t, state, r)
	if w, err := c.Window(ctx); err != nil || w.Open {
		t.Errorf("closed, then restarted: %+v %v", w, err)
	}
	r.stop()

	// A deadline that passed while the daemon was down.
	rec, _ := json.Marshal(map[string]time.Time{"opened": time.Now().Add(-time.Hour), "deadline": time.Now().Add(-time.Minute)})
	os.WriteFile(filepath.Join(state, apitoken.DirName, window.FileName), rec, 0o600)
	r = start(t, state)
	c = adminClient(t, state, r)
	if w, err := c.Window(ctx); err != nil || w.Open {
		t.Errorf("deadline passed: %+v %v", w, err)
	}
	if _, err := os.Stat(filepath.Join(state, apitoken.DirName, window.FileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the passed record stays: %v", err)
	}
}

// TestWindowClosesAtItsDeadline: the daemon's window closes at its TTL
// and its record goes.
func TestWindowClosesAtItsDeadline(t *testing.T) {
	state := t.TempDir()
	r := start(t, state)
	c := adminClient(t, state, r)
	if _, err := c.OpenWindow(context.Background(), 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		w, err := c.Window(context.Background())
		if err == nil && !w.Open {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("after the TTL: %+v %v", w, err)
		}
	}
	if _, err := os.Stat(filepath.Join(state, apitoken.DirName, window.FileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("record after the TTL: %v", err)
	}
}

// TestEventStreamShowsBootSteps: a machine's boot steps in the daemon's
// window (here its iPXE script request) and its answer reach the event
// stream as they happen.
func TestEventStreamShowsBootSteps(t *testing.T) {
	state := t.TempDir()
	r := start(t, state)
	c := adminClient(t, state, r)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	reg := registry.Registration{Name: "pve1", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}}
	if _, err := c.Register(ctx, reg, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := c.OpenWindow(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan backend.Event, 16)
	go c.Events(ctx, client.FromNow, func(_ string, e backend.Event) error { got <- e; return nil })
	time.Sleep(300 * time.Millisecond) // the stream is open
	resp, err := http.Get("http://" + w.HTTP + "/boot.ipxe?mac=52:54:00:00:00:01")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case e := <-got:
		if e.Kind != events.Script || e.MAC != "52:54:00:00:00:01" || !strings.Contains(e.Detail, "pve1") {
			t.Errorf("event: %+v", e)
		}
	case <-ctx.Done():
		t.Fatal("no boot step on the stream")
	}
}

// TestOpenBesideAnotherWindowIs409: while another window (serve's)
// holds the state folder, the API's open is refused with 409 and the
// status shows that window as not the daemon's.
func TestOpenBesideAnotherWindowIs409(t *testing.T) {
	state := t.TempDir()
	r := start(t, state)
	c := adminClient(t, state, r)
	other, err := pxe.New(pxe.Config{StateDir: state, HTTPAddr: "127.0.0.1:0", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- other.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	<-other.Ready()
	_, err = c.OpenWindow(context.Background(), time.Minute)
	var ae *client.Error
	if !errors.Is(err, window.ErrOpen) || !errors.As(err, &ae) || ae.Status != 409 || !strings.Contains(err.Error(), "already has a provisioning window") {
		t.Errorf("open beside serve: %v", err)
	}
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		w, err := c.Window(context.Background())
		if err == nil && w.Open && !w.Daemon && w.URL != "" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("status beside serve: %+v %v", w, err)
		}
	}
}
