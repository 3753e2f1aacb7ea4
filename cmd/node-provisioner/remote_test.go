package main

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/daemon"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestRemoteMode: the commands of remote mode through a daemon, with
// the token from the environment and the fingerprint pinned; the same
// output and exit codes as on the state folder.
func TestRemoteMode(t *testing.T) {
	server, local := t.TempDir(), t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := daemon.New(daemon.Config{StateDir: server, Listener: ln, Window: pxe.Config{HTTPAddr: "127.0.0.1:0"}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-d.Ready()

	tok := func(scope string) string {
		r := np(t, server, "token", "create", scope+"-tok", "--scope", scope)
		if r.code != 0 {
			t.Fatalf("token create: %d %s", r.code, r.err)
		}
		return strings.TrimSpace(r.stdout)
	}
	reg, adm := tok("register"), tok("admin")
	if r := np(t, server, "token", "list"); r.code != 0 || strings.Contains(r.stdout, reg) || !strings.Contains(r.stdout, "register-tok  register") {
		t.Errorf("token list: %d %s", r.code, r.stdout)
	}
	t.Setenv("NODE_PROVISIONER_SERVER", "https://"+d.Addr().String())
	t.Setenv("NODE_PROVISIONER_FINGERPRINT", d.Fingerprint())
	steps := []struct {
		token  string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"", []string{"list"}, 2, "", "needs the API token in NODE_PROVISIONER_TOKEN"},
		{reg, []string{"register", "pve1", "--mac", "52:54:00:00:00:01", "--boot-disk", "sda"}, 0, "Registered pve1: boot disk sda", ""},
		{reg, []string{"register", "pve2", "--mac", "52:54:00:00:00:01"}, 2, "", "already pinned by pending registration pve1"},
		{reg, []string{"register", "pve2", "--mac", "52:54:00:00:00:01", "--replace"}, 0, "Registered pve2", "warning: mac 52:54:00:00:00:01 moved from pve1 to pve2; pve1 pinned nothing else and was removed"},
		{reg, []string{"list"}, 0, "pve2  pending  52:54:00:00:00:01  ask", ""},
		{reg, []string{"unregister", "nope"}, 1, "", `no pending registration named "nope"`},
		{reg, []string{"enable", "--ttl", "1m"}, 1, "", "403 Forbidden"},
		{adm, []string{"enable", "--ttl", "1m", "--http", ":80"}, 2, "", "--http is a setting of the daemon's windows"},
		{adm, []string{"enable", "--ttl", "1m"}, 0, "Provisioning window open: http://127.0.0.1:", ""},
		{adm, []string{"enable"}, 0, "The provisioning window is already open", ""},
		{adm, []string{"enable", "--ttl", "1m"}, 1, "", "keeps its deadline; --ttl would need a new window"},
		{reg, []string{"status"}, 0, "daemon)", ""},
		{adm, []string{"disable"}, 0, "Provisioning window closed", ""},
		{adm, []string{"disable"}, 0, "No provisioning window was open", ""},
		{reg, []string{"status"}, 1, "pve2             pending", ""},
		{reg, []string{"unregister", "pve2"}, 0, "Unregistered pve2", ""},
		{"npt_wrong", []string{"list"}, 1, "", "401 Unauthorized"},
		{reg, []string{"--fingerprint", strings.Repeat("AB:", 31) + "AB", "list"}, 1, "", "server certificate refused"},
		{reg, []string{"--fingerprint", "AB:CD", "list"}, 2, "", "--fingerprint: invalid certificate fingerprint"},
		{reg, []string{"token", "list"}, 1, "", "403 Forbidden"},
		{adm, []string{"token", "create", "remote-ci", "--scope", "read"}, 0, "npt_", ""},
		{adm, []string{"token", "list"}, 0, "remote-ci     read", ""},
		{adm, []string{"token", "create", "nightly", "--scope", "read", "--ttl", "720h"}, 0, "npt_", ""},
		{adm, []string{"token", "list", "-o", "json"}, 0, `"expires": "2`, ""},
		{adm, []string{"token", "create", "late", "--scope", "read", "--ttl", "0"}, 2, "", "--ttl 0s: want a second or more"},
		{adm, []string{"token", "revoke", "remote-ci"}, 0, "Revoked remote-ci", ""},
		{adm, []string{"token", "revoke", "remote-ci"}, 2, "", `no such token named "remote-ci"`},
		{adm, []string{"token", "create", "register-tok", "--scope", "read"}, 2, "", `token exists: "register-tok"`},
	}
	for _, s := range steps {
		t.Setenv("NODE_PROVISIONER_TOKEN", s.token)
		r := np(t, local, s.args...)
		if r.code != s.code || !strings.Contains(r.stdout, s.stdout) || !strings.Contains(r.err, s.stderr) {
			t.Errorf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s\nwant %q / %q", s.args, r.code, s.code, r.stdout, r.err, s.stdout, s.stderr)
		}
		for _, secret := range []string{reg, adm} {
			if strings.Contains(r.stdout+r.err, secret) {
				t.Errorf("%v printed a token", s.args)
			}
		}
	}
	if got := files(t, filepath.Join(local, "registrations")); len(got) != 0 {
		t.Errorf("remote mode wrote locally: %v", got)
	}
}

// TestStatusWatchFollowsTheEventLog: status --watch on the state folder
// prints the events appended after it started, until interrupted (exit
// 0).
func TestStatusWatchFollowsTheEventLog(t *testing.T) {
	state := t.TempDir()
	log := folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{})
	defer log.Close()
	log.Append(t.Context(), backend.Event{Kind: events.Refused, Node: "old", Status: 404})
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuf{}
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--state-dir", state, "--secrets-dir", filepath.Join(state, "s"), "status", "--watch"}, out, out)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "Events (until interrupted)") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	log.Append(t.Context(), backend.Event{Kind: events.Answer, Node: "pve9", Status: 200, Detail: "matched by mac"})
	for !strings.Contains(out.String(), "pve9") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if c := <-code; c != 0 || !strings.Contains(out.String(), "answer     pve9              200 matched by mac") || strings.Contains(out.String(), "old") {
		t.Errorf("exit %d:\n%s", c, out.String())
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTokenTTL: token create --ttl on the state folder makes a token
// that says when it expires in token list (EXPIRES, and expires in -o
// json), one without says never, and a --ttl under a second is a usage
// error that makes nothing.
func TestTokenTTL(t *testing.T) {
	state := t.TempDir()
	if r := np(t, state, "token", "create", "nightly", "--scope", "read", "--ttl", "3600"); r.code != 0 || !strings.HasPrefix(r.stdout, "npt_") {
		t.Fatalf("token create --ttl 3600: %d %s %s", r.code, r.stdout, r.err)
	}
	if r := np(t, state, "token", "create", "ci", "--scope", "read"); r.code != 0 {
		t.Fatalf("token create: %d %s", r.code, r.err)
	}
	for _, ttl := range []string{"0", "500ms", "-1h"} {
		if r := np(t, state, "token", "create", "late", "--scope", "read", "--ttl", ttl); r.code != 2 || !strings.Contains(r.err, "--ttl") {
			t.Errorf("--ttl %s: exit %d %s, want 2 naming --ttl", ttl, r.code, r.err)
		}
	}
	r := np(t, state, "token", "list")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.Contains(lines[0], "EXPIRES") || !strings.HasSuffix(lines[1], "never") {
		t.Fatalf("token list: %d\n%s", r.code, r.stdout)
	}
	f := strings.Fields(lines[2])
	exp, err := time.Parse(time.RFC3339, f[len(f)-1])
	if err != nil || exp.Before(time.Now().Add(59*time.Minute)) || exp.After(time.Now().Add(61*time.Minute)) {
		t.Errorf("nightly expires %q (%v), want in an hour", f[len(f)-1], err)
	}
	if r := np(t, state, "token", "list", "-o", "json"); !strings.Contains(r.stdout, `"expires": "`+exp.Format(time.RFC3339)+`"`) {
		t.Errorf("token list -o json has no expiry for nightly:\n%s", r.stdout)
	}
}
