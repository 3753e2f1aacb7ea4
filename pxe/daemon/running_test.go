package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/daemon"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestRunningRecord: a running daemon is recorded (0600, its pid, its
// API's address), a client made from the record alone reaches it with
// the state folder's certificate pinned, and the record goes when the
// daemon stops.
func TestRunningRecord(t *testing.T) {
	state := t.TempDir()
	r := start(t, state)
	rec, ok, err := daemon.Running(state)
	if err != nil || !ok {
		t.Fatalf("Running while it runs: %+v %v %v", rec, ok, err)
	}
	if rec.PID != os.Getpid() || rec.Addr != r.d.Addr().String() || rec.Started.IsZero() {
		t.Errorf("record %+v, want pid %d addr %s", rec, os.Getpid(), r.d.Addr())
	}
	path := filepath.Join(state, apitoken.DirName, daemon.RunningName)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("record file: %v %v, want mode 0600", fi, err)
	}
	st, _ := folder.OpenTokens(state, nil)
	tok, err := st.Create(context.Background(), "ops", apitoken.ScopeAdmin, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := daemon.LocalClient(state, rec, tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := c.OpenWindow(context.Background(), time.Minute); err != nil || !w.Daemon {
		t.Errorf("open through the record's client: %+v %v", w, err)
	}
	r.stop()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("record after the daemon stopped: %v", err)
	}
	if rec, ok, err := daemon.Running(state); ok || err != nil {
		t.Errorf("Running after the daemon stopped: %+v %v %v", rec, ok, err)
	}
}

// TestRunningStale: a record left by a killed daemon (its pid dead) is
// not a running daemon; a record that is not one is an error; no record
// is none.
func TestRunningStale(t *testing.T) {
	state := t.TempDir()
	if _, ok, err := daemon.Running(state); ok || err != nil {
		t.Errorf("no record: %v %v", ok, err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(state, apitoken.DirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(daemon.Record{PID: dead.Process.Pid, Addr: "127.0.0.1:8091", Started: time.Now()})
	if err := os.WriteFile(filepath.Join(dir, daemon.RunningName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if rec, ok, err := daemon.Running(state); ok || err != nil || rec.PID != dead.Process.Pid {
		t.Errorf("dead pid %d: %+v %v %v, want not running", dead.Process.Pid, rec, ok, err)
	}
	// A live pid that is not the daemon (a reused pid): the daemon's lock
	// is free.
	data, _ = json.Marshal(daemon.Record{PID: os.Getpid(), Addr: "127.0.0.1:8091", Started: time.Now()})
	if err := os.WriteFile(filepath.Join(dir, daemon.RunningName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if rec, ok, err := daemon.Running(state); ok || err != nil {
		t.Errorf("live pid without the daemon's lock: %+v %v %v, want not running", rec, ok, err)
	}
	if err := os.WriteFile(filepath.Join(dir, daemon.RunningName), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := daemon.Running(state); ok || err == nil {
		t.Errorf("garbled record: %v %v, want an error", ok, err)
	}
}

// TestRecordURL: an unspecified listen host is dialled on loopback.
func TestRecordURL(t *testing.T) {
	for addr, want := range map[string]string{
		":8091":          "https://127.0.0.1:8091",
		"0.0.0.0:8091":   "https://127.0.0.1:8091",
		"[::]:8091":      "https://127.0.0.1:8091",
		"127.0.0.1:8091": "https://127.0.0.1:8091",
		"[::1]:8091":     "https://[::1]:8091",
		"10.0.0.5:8091":  "https://10.0.0.5:8091",
	} {
		if diff := cmp.Diff(want, daemon.Record{Addr: addr}.URL()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", addr, diff)
		}
	}
}

// TestLocalClientNeedsCertificate: without the state folder's
// certificate there is nothing to pin, and none is made.
func TestLocalClientNeedsCertificate(t *testing.T) {
	state := t.TempDir()
	_, err := daemon.LocalClient(state, daemon.Record{PID: os.Getpid(), Addr: "127.0.0.1:8091"}, "tok", nil)
	if !errors.Is(err, daemon.ErrNoCertificate) {
		t.Errorf("err %v, want ErrNoCertificate", err)
	}
	if _, err := os.Stat(filepath.Join(state, "tls")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("tls folder made: %v", err)
	}
}

// TestSecondDaemonRefused: one daemon per state folder; the second names
// the first and leaves its record alone.
func TestSecondDaemonRefused(t *testing.T) {
	state := t.TempDir()
	first := start(t, state)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(daemon.Config{StateDir: state, Listener: ln, Window: pxe.Config{HTTPAddr: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	err = d.Run(context.Background())
	if !errors.Is(err, daemon.ErrRunning) || !strings.Contains(err.Error(), first.d.Addr().String()) {
		t.Errorf("second daemon: %v, want ErrRunning naming %s", err, first.d.Addr())
	}
	if rec, ok, err := daemon.Running(state); !ok || err != nil || rec.Addr != first.d.Addr().String() {
		t.Errorf("first daemon's record after the second was refused: %+v %v %v", rec, ok, err)
	}
}
