package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/store/postgres"
	"github.com/plasmactl/plasma-node/pxe/window"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/daemon"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// siteHost is one provisioner host of a two-host site in one test: its
// state folder, daemon and admin client.
type siteHost struct {
	name  string
	state string
	r     *running
	c     *client.Client
}

// startSiteHost runs a daemon named name on a state folder of its own
// with storeURL as its PostgreSQL store, its API and window on loopback.
func startSiteHost(t *testing.T, name, stateDir, storeURL string) *siteHost {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(daemon.Config{StateDir: stateDir, Listener: ln, Host: name, Store: storeURL, Window: pxe.Config{HTTPAddr: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	select {
	case <-d.Ready():
	case err := <-done:
		t.Fatalf("daemon %s: %v", name, err)
	}
	var once sync.Once
	r := &running{d: d, url: "https://" + d.Addr().String(), stop: func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("daemon %s run: %v", name, err)
			}
		})
	}}
	t.Cleanup(r.stop)
	stores, err := store.Open(t.Context(), stateDir, store.Options{Store: storeURL, Openers: postgres.Openers()})
	if err != nil {
		t.Fatal(err)
	}
	defer stores.Close()
	tokens, err := stores.Tokens()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokens.Create(ctx, "admin-"+name+time.Now().Format("150405.000000000"), apitoken.ScopeAdmin, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.Options{URL: r.url, Token: tok, Fingerprint: d.Fingerprint(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &siteHost{name: name, state: stateDir, r: r, c: c}
}

// twoHosts starts hosts a and b on one PostgreSQL store, b with a copy
// of a's key file (0600).
func twoHosts(t *testing.T) (a, b *siteHost) {
	t.Helper()
	a, b, _ = twoHostsOn(t)
	return a, b
}

// twoHostsOn is twoHosts, with the PostgreSQL server.
func twoHostsOn(t *testing.T) (a, b *siteHost, srv *pgtest.Server) {
	t.Helper()
	srv = pgtest.Start(t)
	db := srv.NewDatabase(t)
	a = startSiteHost(t, "a", t.TempDir(), db)
	stateB := t.TempDir()
	key, err := os.ReadFile(filepath.Join(a.state, store.KeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stateB, store.KeyFileName), key, 0o600); err != nil {
		t.Fatal(err)
	}
	return a, startSiteHost(t, "b", stateB, db), srv
}

// waitWindow polls h's window until ok holds, for up to 10 s.
func waitWindow(t *testing.T, h *siteHost, what string, ok func(client.WindowStatus) bool) client.WindowStatus {
	t.Helper()
	var w client.WindowStatus
	var err error
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if w, err = h.c.Window(context.Background()); err == nil && ok(w) {
			return w
		}
	}
	t.Fatalf("host %s: %s: last %+v %v", h.name, what, w, err)
	return w
}

func serving(w client.WindowStatus) bool {
	return w.Open && w.Daemon && w.URL != "" && !w.Deadline.IsZero()
}

func closed(w client.WindowStatus) bool { return !w.Open }

// bootScript asks addr's window for mac's iPXE script: the status, or
// an error when nothing answers.
func bootScript(addr, mac string) (int, error) {
	hc := &http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Get("http://" + addr + "/boot.ipxe?mac=" + mac)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// postAnswer posts an installer's system information for mac to addr's
// answer endpoint: the status.
func postAnswer(t *testing.T, addr, mac string) int {
	t.Helper()
	body := fmt.Sprintf(`{"iso":{"release":"9.2"},"network_interfaces":[{"link":"eth0","mac":"%s"}]}`, mac)
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Post("http://"+addr+"/answer", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestTwoHostsServeTheSitesWindow: two daemons on one PostgreSQL store.
// Opened through a, b serves too (its HTTP answers), and status through
// either lists both hosts serving; b's event stream shows a boot step
// made on a; a registration made through a is answered by b, once
// across both; closed through b, a stops.
func TestTwoHostsServeTheSitesWindow(t *testing.T) {
	a, b := twoHosts(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const mac = "52:54:00:00:00:0a"
	reg := registry.Registration{Name: "pve1", MACs: []string{mac}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}}
	if _, err := a.c.Register(ctx, reg, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	wa, err := a.c.OpenWindow(ctx, time.Minute)
	if err != nil || !serving(wa) || wa.OpenedBy != "a" {
		t.Fatalf("open through a: %+v %v", wa, err)
	}
	opened := time.Now()
	wb := waitWindow(t, b, "serving the window a opened", serving)
	t.Logf("b serves %s after a's open answered", time.Since(opened).Round(time.Millisecond))
	if wb.Deadline.Sub(wa.Deadline).Abs() > time.Second || wb.OpenedBy != "a" {
		t.Errorf("b's window %+v, a's deadline %s", wb, wa.Deadline)
	}
	if st, err := bootScript(wb.HTTP, mac); err != nil || st != http.StatusOK {
		t.Errorf("b's boot script: %d %v", st, err)
	}
	for _, h := range []*siteHost{a, b} {
		waitWindow(t, h, "listing both hosts serving", func(w client.WindowStatus) bool {
			return len(w.Hosts) == 2 && w.Hosts[0].Name == "a" && w.Hosts[1].Name == "b" && w.Hosts[0].Serving && w.Hosts[1].Serving
		})
	}

	got := make(chan backend.Event, 16)
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go b.c.Events(sctx, client.FromNow, func(_ string, e backend.Event) error { got <- e; return nil })
	time.Sleep(500 * time.Millisecond) // the stream is open
	if _, err := bootScript(wa.HTTP, mac); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-got:
		if e.Kind != events.Script || e.MAC != mac {
			t.Errorf("b's stream: %+v, want a's script event", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a's boot step is not on b's stream")
	}

	if st := postAnswer(t, wb.HTTP, mac); st != http.StatusOK {
		t.Fatalf("b's answer to a's registration: %d", st)
	}
	for _, addr := range []string{wa.HTTP, wb.HTTP} {
		if st := postAnswer(t, addr, mac); st == http.StatusOK {
			t.Errorf("a second answer from %s: %d", addr, st)
		}
	}

	if err := b.c.CloseWindow(ctx); err != nil {
		t.Fatal(err)
	}
	closedAt := time.Now()
	waitWindow(t, a, "stopped once b closed the window", closed)
	t.Logf("a stopped %s after b's close answered", time.Since(closedAt).Round(time.Millisecond))
	if _, err := bootScript(wa.HTTP, mac); err == nil {
		t.Errorf("a's HTTP still answers after the close through b")
	}
}

// TestTheSitesWindowExpiresOnBothHosts: a window opened through b for
// 2 s stops on both at its deadline.
func TestTheSitesWindowExpiresOnBothHosts(t *testing.T) {
	a, b := twoHosts(t)
	if _, err := b.c.OpenWindow(context.Background(), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	waitWindow(t, a, "serving b's window", serving)
	for _, h := range []*siteHost{a, b} {
		waitWindow(t, h, "closed at the deadline", closed)
	}
	if _, err := a.c.OpenWindow(context.Background(), time.Minute); err != nil {
		t.Errorf("open after the expiry: %v", err)
	}
}

// TestAHostDiesTheOtherGoesOn: a's daemon ends (its host dies) while
// the window it opened is open: b goes on serving, refuses a second open
// while it is open, closes it, and a new open through b serves.
func TestAHostDiesTheOtherGoesOn(t *testing.T) {
	a, b := twoHosts(t)
	ctx := context.Background()
	if _, err := a.c.OpenWindow(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	wb := waitWindow(t, b, "serving a's window", serving)
	a.r.stop()
	time.Sleep(2 * pollInterval)
	if st, err := bootScript(wb.HTTP, "52:54:00:00:00:0b"); err != nil || st >= 500 {
		t.Errorf("b after a died: %d %v", st, err)
	}
	if _, err := b.c.OpenWindow(ctx, time.Minute); !errors.Is(err, window.ErrOpen) || !strings.Contains(err.Error(), "opened by a") {
		t.Errorf("second open through b: %v", err)
	}
	if err := b.c.CloseWindow(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := b.c.OpenWindow(ctx, time.Minute)
	if err != nil || !serving(w) || w.OpenedBy != "b" {
		t.Fatalf("open through b: %+v %v", w, err)
	}
	if st, err := bootScript(w.HTTP, "52:54:00:00:00:0b"); err != nil || st >= 500 {
		t.Errorf("b's new window: %d %v", st, err)
	}
}

// pollInterval is how often a daemon reads the site's window.
const pollInterval = time.Second

// TestAStoreOutageChangesNothingOnTheHosts: while the PostgreSQL store
// is stopped, a host serving the site's window goes on serving it (its
// HTTP answers) and its status is 503 naming the store; once the store is
// back, the same daemons answer again and a close through a stops b.
func TestAStoreOutageChangesNothingOnTheHosts(t *testing.T) {
	a, b, srv := twoHostsOn(t)
	ctx := context.Background()
	if _, err := a.c.OpenWindow(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	wb := waitWindow(t, b, "serving a's window", serving)
	srv.Stop(t)
	time.Sleep(3 * pollInterval)
	if _, err := bootScript(wb.HTTP, "52:54:00:00:00:0d"); err != nil {
		t.Errorf("b's window during the outage: %v", err)
	}
	_, err := b.c.Window(ctx)
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || !strings.Contains(ae.Message, "PostgreSQL store") {
		t.Errorf("b's status during the outage: %v; want 503 naming the store", err)
	}
	srv.Restart(t)
	waitWindow(t, b, "serving once the store is back", serving)
	if err := a.c.CloseWindow(ctx); err != nil {
		t.Fatal(err)
	}
	waitWindow(t, b, "stopped once a closed the window", closed)
}
