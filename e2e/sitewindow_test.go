package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// waitSiteWindow polls c's window until ok holds, for up to 15 s.
func waitSiteWindow(t *testing.T, c *client.Client, what string, ok func(client.WindowStatus) bool) client.WindowStatus {
	t.Helper()
	var w client.WindowStatus
	var err error
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if w, err = c.Window(context.Background()); err == nil && ok(w) {
			return w
		}
	}
	t.Fatalf("%s: last %+v %v", what, w, err)
	return w
}

func siteServing(w client.WindowStatus) bool { return w.Open && w.Daemon && w.URL != "" }

// TestDaemonSiteWindowSurvivesAHostKilled: two node-provisioner daemon
// processes (two hosts: two state folders, a copy of the key file) on
// one PostgreSQL store. The window opened through a is served by b; a
// is killed (SIGKILL) and b goes on serving; a started again rejoins
// the window until its deadline; closed through b, a stops.
func TestDaemonSiteWindowSurvivesAHostKilled(t *testing.T) {
	srv := pgtest.Start(t)
	t.Setenv(registrar.EnvStore, srv.NewDatabase(t))
	stateA, stateB := t.TempDir(), t.TempDir()
	tok := npOut(t, stateA, "token", "create", "ops", "--scope", "admin") // in the store: both hosts take it
	addrA, addrB := freeAddr(t), freeAddr(t)
	ca, err := client.New(client.Options{URL: "https://" + addrA, Token: tok, Fingerprint: npOut(t, stateA, "tls", "fingerprint")})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := client.New(client.Options{URL: "https://" + addrB, Token: tok, Fingerprint: npOut(t, stateB, "tls", "fingerprint")})
	if err != nil {
		t.Fatal(err)
	}
	da := startDaemon(t, stateA, addrA, ca)
	defer func() { da.cmd.Process.Kill(); da.cmd.Wait() }()
	key, err := os.ReadFile(filepath.Join(stateA, store.KeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stateB, store.KeyFileName), key, 0o600); err != nil {
		t.Fatal(err)
	}
	db := startDaemon(t, stateB, addrB, cb)
	defer func() { db.cmd.Process.Kill(); db.cmd.Wait() }()

	ctx := context.Background()
	wa, err := ca.OpenWindow(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	wb := waitSiteWindow(t, cb, "b serving a's window", siteServing)
	da.cmd.Process.Kill()
	da.cmd.Wait()
	time.Sleep(2 * time.Second)
	resp, err := http.Get("http://" + wb.HTTP + "/boot.ipxe?mac=52:54:00:00:00:0c")
	if err != nil {
		t.Fatalf("b after a was killed: %v\nb's log:\n%s", err, db.logs)
	}
	resp.Body.Close()
	if w, err := cb.Window(ctx); err != nil || !siteServing(w) || w.PID != db.cmd.Process.Pid {
		t.Errorf("b's window after a was killed: %+v %v", w, err)
	}

	da = startDaemon(t, stateA, addrA, ca)
	w := waitSiteWindow(t, ca, "a rejoining the window", siteServing)
	if d := w.Deadline.Sub(wa.Deadline); d < -time.Second || d > time.Second || w.PID != da.cmd.Process.Pid {
		t.Errorf("a rejoined %+v; want pid %d until %s", w, da.cmd.Process.Pid, wa.Deadline)
	}
	if err := cb.CloseWindow(ctx); err != nil {
		t.Fatal(err)
	}
	waitSiteWindow(t, ca, "a stopping once b closed the window", func(w client.WindowStatus) bool { return !w.Open })
}
