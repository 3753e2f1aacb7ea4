package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/idempotency"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type env struct {
	state  string
	h      *api.Handler
	ts     *httptest.Server
	tokens map[string]string // by scope, plus "revoked"
	store  *folder.Tokens
	logs   *syncBuffer
}

func newEnv(t *testing.T, tweak func(*api.Config)) *env {
	t.Helper()
	e := &env{state: t.TempDir(), tokens: map[string]string{}, logs: &syncBuffer{}}
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg, err := folder.OpenRegistrations(e.state, log)
	if err != nil {
		t.Fatal(err)
	}
	if e.store, err = folder.OpenTokens(e.state, log); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, s := range []apitoken.Scope{apitoken.ScopeRead, apitoken.ScopeRegister, apitoken.ScopeAdmin} {
		if e.tokens[string(s)], err = e.store.Create(ctx, "t-"+string(s), s, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if e.tokens["revoked"], err = e.store.Create(ctx, "gone", apitoken.ScopeAdmin, time.Time{}); err != nil {
		t.Fatal(err)
	}
	cfg := api.Config{Window: folder.Window(e.state), Registry: reg, Tokens: e.store, Logger: log, Events: folder.OpenEvents(folder.EventsPath(e.state), folder.EventsOptions{Poll: 20 * time.Millisecond})}
	if tweak != nil {
		tweak(&cfg)
	}
	if cfg.Replies == nil {
		cfg.Replies = folderReplies(t, e.state)
	}
	h, err := api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.h, e.ts = h, httptest.NewTLSServer(h)
	t.Cleanup(e.ts.Close)
	return e
}

type reply struct {
	status int
	header http.Header
	body   string
	err    api.Error
}

func (e *env) do(t *testing.T, method, path, token, body string, header ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, e.ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
	json.Unmarshal(b, &r.err)
	return r
}

const pve1 = `{"name":"pve1","macs":["52:54:00:00:00:01"],"boot_disk":"sda"}`

// TestRefusals: every refusal the issue names, with its status, message
// and field.
func TestRefusals(t *testing.T) {
	e := newEnv(t, nil)
	if err := e.store.Revoke(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	big := `{"name":"pve1","macs":["` + strings.Repeat("a", api.MaxBody) + `"]}`
	tests := []struct {
		name, method, path, token, body string
		status                          int
		msg, field                      string
	}{
		{"no token", "GET", "/api/v1/registrations", "", "", 401, "missing bearer token", ""},
		{"not bearer", "GET", "/api/v1/registrations", "", "", 401, "the Authorization header is not a bearer token", ""},
		{"wrong token", "GET", "/api/v1/registrations", "npt_wrong", "", 401, "invalid or revoked token", ""},
		{"revoked token", "GET", "/api/v1/registrations", "revoked", "", 401, "invalid or revoked token", ""},
		{"read token creating", "POST", "/api/v1/registrations", "read", pve1, 403, `token "t-read" has scope read; POST /api/v1/registrations needs register`, ""},
		{"register token opening", "PUT", "/api/v1/window", "register", `{"ttl":"1h"}`, 403, "needs admin", ""},
		{"oversized body", "POST", "/api/v1/registrations", "register", big, 413, "request body over 65536 bytes", ""},
		{"unknown field", "POST", "/api/v1/registrations", "register", `{"name":"pve1","macs":[],"color":"red"}`, 400, `unknown field "color"`, "color"},
		{"consumed field", "POST", "/api/v1/registrations", "register", `{"name":"pve1","install_ip":"1.2.3.4"}`, 400, `unknown field "install_ip"`, "install_ip"},
		{"not JSON", "POST", "/api/v1/registrations", "register", `{"name":`, 400, "malformed request", ""},
		{"replace not bool", "POST", "/api/v1/registrations", "register", `{"name":"pve1","replace":"yes"}`, 400, "replace: want true or false", "replace"},
		{"bad MAC", "POST", "/api/v1/registrations", "register", `{"name":"pve1","macs":["zz"]}`, 422, `invalid MAC address: "zz" (want a NIC's own address: six hex pairs such as 52:54:00:12:34:56, not broadcast, multicast or all zero)`, "macs"},
		{"numeric name", "POST", "/api/v1/registrations", "register", `{"name":"123","macs":["52:54:00:00:00:09"]}`, 422, "not digits only", "name"},
		{"bad boot disk", "POST", "/api/v1/registrations", "register", `{"name":"pve1","boot_disk":"/dev/sda"}`, 422, "invalid boot disk", "boot_disk"},
		{"window ttl", "PUT", "/api/v1/window", "admin", `{"ttl":"forever"}`, 422, `ttl "forever"`, "ttl"},
		{"window unknown field", "PUT", "/api/v1/window", "admin", `{"ttl":"1h","dhcp":"eth0"}`, 400, `unknown field "dhcp"`, "dhcp"},
		{"window secure_boot not bool", "PUT", "/api/v1/window", "admin", `{"ttl":"1h","secure_boot":"yes"}`, 400, "secure_boot: want true or false, not a JSON string", "secure_boot"},
		{"window secure_boot a number", "PUT", "/api/v1/window", "admin", `{"ttl":"1h","secure_boot":1}`, 400, "secure_boot: want true or false, not a JSON number", "secure_boot"},
		{"window ttl not a string", "PUT", "/api/v1/window", "admin", `{"ttl":3600}`, 400, "ttl: want a string, not a JSON number", "ttl"},
		{"window secure boot in capitals", "PUT", "/api/v1/window", "admin", `{"ttl":"1h","Secure_Boot":true}`, 400, `unknown field "Secure_Boot" (keys are case-sensitive: "secure_boot")`, "Secure_Boot"},
		{"window secure boot misspelt", "PUT", "/api/v1/window", "admin", `{"ttl":"1h","secureboot":true}`, 400, `unknown field "secureboot"`, "secureboot"},
		{"no windows here", "PUT", "/api/v1/window", "admin", `{"ttl":"1h"}`, 503, "does not run windows", ""},
		{"unknown node", "GET", "/api/v1/registrations/nope", "read", "", 404, `no registration named "nope"`, "name"},
		{"delete unknown", "DELETE", "/api/v1/registrations/nope", "register", "", 404, `no pending registration named "nope"`, "name"},
		{"bad name", "GET", "/api/v1/registrations/a.b", "read", "", 400, "invalid name", "name"},
		{"wrong method", "PATCH", "/api/v1/window", "admin", "", 405, "method PATCH not allowed on /api/v1/window (allowed: GET, PUT, DELETE)", ""},
		{"no such endpoint", "GET", "/api/v1/nodes", "admin", "", 404, "no such endpoint", ""},
		{"bad event id", "GET", "/api/v1/events", "read", "", 400, "is not an id this server sent", "Last-Event-ID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok := e.tokens[tc.token]
			if tok == "" {
				tok = tc.token
			}
			var hdr []string
			if tc.name == "not bearer" {
				hdr = []string{"Authorization", "Basic dXNlcjpwYXNz"}
			}
			if tc.name == "bad event id" {
				hdr = []string{"Last-Event-ID", "x"}
			}
			r := e.do(t, tc.method, tc.path, tok, tc.body, hdr...)
			if r.status != tc.status || !strings.Contains(r.err.Error, tc.msg) || r.err.Field != tc.field {
				t.Errorf("%s %s: %d %s; want %d with %q, field %q", tc.method, tc.path, r.status, r.body, tc.status, tc.msg, tc.field)
			}
			if r.status == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without WWW-Authenticate: Bearer: %q", r.header.Get("WWW-Authenticate"))
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	if got, _ := os.ReadDir(filepath.Join(e.state, "registrations")); len(got) > 1 { // the lock file only
		t.Errorf("files after the refusals: %v", got)
	}
	logs := e.logs.String()
	if !strings.Contains(logs, "api: authentication failed") || !strings.Contains(logs, "client_ip=127.0.0.1") {
		t.Errorf("failed authentications not logged with the address:\n%s", logs)
	}
	checkNoTokenText(t, e, logs)
}

// checkNoTokenText: no token appears in the logs or any file of the
// state folder (only the hashes do).
func checkNoTokenText(t *testing.T, e *env, logs string) {
	t.Helper()
	for scope, tok := range e.tokens {
		if strings.Contains(logs, tok) {
			t.Errorf("the %s token is in the log", scope)
		}
	}
	filepath.WalkDir(e.state, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		for scope, tok := range e.tokens {
			if bytes.Contains(b, []byte(tok)) {
				t.Errorf("the %s token is in %s", scope, p)
			}
		}
		return nil
	})
}

// TestRegistrationLifecycle: create (201), the same pin again (409),
// list, get, delete (204), with the CLI's messages.
func TestRegistrationLifecycle(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.tokens["register"]
	r := e.do(t, "POST", "/api/v1/registrations", tok, pve1)
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var created api.RegisterResponse
	json.Unmarshal([]byte(r.body), &created)
	if created.Registration.Name != "pve1" || created.Registration.BootDisk.String() != "sda" || created.Previous != nil {
		t.Errorf("created: %s", r.body)
	}
	r = e.do(t, "POST", "/api/v1/registrations", tok, `{"name":"pve2","macs":["52-54-00-00-00-01"]}`)
	want := "registration pve2: mac 52:54:00:00:00:01 is already pinned by pending registration pve1 (unregister it, or replace to move the pin)"
	if r.status != 409 || r.err.Error != want || r.err.Field != "macs" {
		t.Errorf("pin taken: %d %s", r.status, r.body)
	}
	r = e.do(t, "POST", "/api/v1/registrations", tok, `{"name":"pve2","macs":["52-54-00-00-00-01"],"replace":true}`)
	json.Unmarshal([]byte(r.body), &created)
	if r.status != 201 || !cmp.Equal(created.Moved, []api.PinMove{{Kind: "mac", Value: "52:54:00:00:00:01", From: "pve1", Removed: true}}) {
		t.Errorf("replace: %d %s", r.status, r.body)
	}
	// Without boot_disk it is asked on the console, as register without --boot-disk.
	if r = e.do(t, "POST", "/api/v1/registrations", tok, `{"name":"pve3","serial":"SN-4711"}`); r.status != 201 || !strings.Contains(r.body, `"boot_disk":"ask"`) {
		t.Errorf("no boot disk: %d %s", r.status, r.body)
	}
	r = e.do(t, "GET", "/api/v1/registrations", e.tokens["read"], "")
	var nodes []struct{ Name, State string }
	json.Unmarshal([]byte(r.body), &nodes)
	if want := []struct{ Name, State string }{{"pve2", "pending"}, {"pve3", "pending"}}; r.status != 200 || !cmp.Equal(nodes, want) {
		t.Errorf("list: %d %s", r.status, r.body)
	}
	if r = e.do(t, "GET", "/api/v1/registrations/pve3", e.tokens["read"], ""); r.status != 200 || !strings.Contains(r.body, `"serial":"SN-4711"`) {
		t.Errorf("get: %d %s", r.status, r.body)
	}
	if r = e.do(t, "DELETE", "/api/v1/registrations/pve3", tok, ""); r.status != 204 {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	if r = e.do(t, "GET", "/api/v1/health", "", ""); r.status != 200 || r.body != "{\"status\":\"ok\",\"version\":\"devel\"}\n" {
		t.Errorf("health: %d %q", r.status, r.body)
	}
}

// TestHealthShowsTheBuild: a daemon built by make build reports its
// version, commit and the commit's date, without a token.
func TestHealthShowsTheBuild(t *testing.T) {
	b := api.Build{Version: "v0.0.0-20261205230338-004a729271e1", Commit: "004a729271e13544e58bb8a3384dfe7e1ae34cd5", Date: "2026-12-05T23:03:38Z"}
	e := newEnv(t, func(c *api.Config) { c.Build = b })
	r := e.do(t, "GET", "/api/v1/health", "", "")
	var got api.Health
	if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.status != 200 {
		t.Fatalf("health: %d %q (%v)", r.status, r.body, err)
	}
	if diff := cmp.Diff(api.Health{Status: "ok", Build: b}, got); diff != "" {
		t.Errorf("health (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.body, `"commit":"004a729271e13544e58bb8a3384dfe7e1ae34cd5"`) {
		t.Errorf("health has no flat commit key: %s", r.body)
	}
}

// TestIdempotencyKey: a repeat with the same key and body gets the first
// reply, also from a new handler on the same folder (a restart); the key
// with another body is refused.
func TestIdempotencyKey(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.tokens["register"]
	first := e.do(t, "POST", "/api/v1/registrations", tok, pve1, api.IdempotencyHeader, "k1")
	if first.status != 201 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	// Someone changes the registration meanwhile: a replay still answers
	// as the first time, and writes nothing.
	if r := e.do(t, "POST", "/api/v1/registrations", tok, `{"name":"pve1","macs":["52:54:00:00:00:02"]}`); r.status != 201 {
		t.Fatal(r.body)
	}
	again := e.do(t, "POST", "/api/v1/registrations", tok, pve1, api.IdempotencyHeader, "k1")
	if again.status != 201 || again.body != first.body || again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("repeat: %d %s (first %s)", again.status, again.body, first.body)
	}
	// A new handler on the same state folder: the reply is on disk.
	reg, _ := folder.OpenRegistrations(e.state, nil)
	h, err := api.New(api.Config{Window: folder.Window(e.state), Registry: reg, Tokens: e.store, Replies: folderReplies(t, e.state), Events: folder.OpenEvents(folder.EventsPath(e.state), folder.EventsOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(h)
	defer ts.Close()
	e2 := &env{ts: ts}
	if r := e2.do(t, "POST", "/api/v1/registrations", tok, pve1, api.IdempotencyHeader, "k1"); r.status != 201 || r.body != first.body {
		t.Errorf("after restart: %d %s", r.status, r.body)
	}
	if r := e2.do(t, "POST", "/api/v1/registrations", tok, pve1+" ", api.IdempotencyHeader, "k1"); r.status != 422 || r.err.Field != api.IdempotencyHeader {
		t.Errorf("other body: %d %s", r.status, r.body)
	}
	got, err := reg.Get(context.Background(), "pve1")
	if err != nil || !cmp.Equal(got.MACs, []string{"52:54:00:00:00:02"}) {
		t.Errorf("the replays wrote: %v %v", got.MACs, err)
	}
}

// TestAuthFailuresAreRateLimited: past the bound of failures an address
// is refused with 429 until the window passes, but a valid token from
// that address is never refused for the failures of others there.
func TestAuthFailuresAreRateLimited(t *testing.T) {
	e := newEnv(t, func(c *api.Config) { c.MaxAuthFailures, c.AuthFailureWindow = 3, 300*time.Millisecond })
	for i := range 3 {
		if r := e.do(t, "GET", "/api/v1/window", "npt_guess", ""); r.status != 401 {
			t.Fatalf("guess %d: %d", i, r.status)
		}
	}
	r := e.do(t, "GET", "/api/v1/window", "npt_guess", "")
	if r.status != 429 || r.header.Get("Retry-After") == "" || !strings.Contains(r.err.Error, "too many failed authentications") {
		t.Errorf("a fourth guess: %d %v %s", r.status, r.header, r.body)
	}
	if r := e.do(t, "GET", "/api/v1/window", e.tokens["read"], ""); r.status != 200 || r.body != "{\"open\":false}\n" {
		t.Errorf("a valid token from the address after 4 failures: %d %s, want 200", r.status, r.body)
	}
	time.Sleep(350 * time.Millisecond)
	if r := e.do(t, "GET", "/api/v1/window", "npt_guess", ""); r.status != 401 {
		t.Errorf("a guess after the window: %d %s, want 401", r.status, r.body)
	}
	if !strings.Contains(e.logs.String(), "too many failed authentications from this address\" client_ip=127.0.0.1") {
		t.Errorf("log:\n%s", e.logs.String())
	}
}

// TestRevokeIsImmediate: a token revoked by another process (another
// store on the folder, as the CLI is) is refused at the next request.
func TestRevokeIsImmediate(t *testing.T) {
	e := newEnv(t, nil)
	if r := e.do(t, "GET", "/api/v1/registrations", e.tokens["admin"], ""); r.status != 200 {
		t.Fatal(r.body)
	}
	cli, _ := folder.OpenTokens(e.state, nil)
	if err := cli.Revoke(context.Background(), "t-admin"); err != nil {
		t.Fatal(err)
	}
	if r := e.do(t, "GET", "/api/v1/registrations", e.tokens["admin"], ""); r.status != 401 {
		t.Errorf("revoked: %d %s", r.status, r.body)
	}
}

// TestEventStreamsAreBounded: past MaxStreams open streams, another is
// refused with 503 until one closes.
func TestEventStreamsAreBounded(t *testing.T) {
	e := newEnv(t, func(c *api.Config) { c.MaxStreams = 2 })
	open := func() (*http.Response, error) {
		req, _ := http.NewRequest("GET", e.ts.URL+"/api/v1/events", nil)
		req.Header.Set("Authorization", "Bearer "+e.tokens["read"])
		return e.ts.Client().Do(req)
	}
	var held []*http.Response
	for range 2 {
		resp, err := open()
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("stream: %v %v", resp, err)
		}
		held = append(held, resp)
	}
	if r := e.do(t, "GET", "/api/v1/events", e.tokens["read"], ""); r.status != 503 || !strings.Contains(r.err.Error, "2 event streams are open already") {
		t.Errorf("third stream: %d %s", r.status, r.body)
	}
	held[0].Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := open()
		if err == nil && resp.StatusCode == 200 {
			resp.Body.Close()
			break
		}
		if err == nil {
			resp.Body.Close()
		}
		if time.Now().After(deadline) {
			t.Fatal("a closed stream's place was not freed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	held[1].Body.Close()
}

// TestRepeatAfterALostRecordIsNoReplacement: a repeat whose first
// attempt wrote the registration but died before keeping the reply (no
// idempotency record) gets 201 without "previous": it replaced only
// itself.
func TestRepeatAfterALostRecordIsNoReplacement(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.tokens["register"]
	body := `{"name":"pve1","macs":["52:54:00:00:00:01"],"created":"2026-12-03T10:00:00.123456789+00:00"}`
	if r := e.do(t, "POST", "/api/v1/registrations", tok, body, api.IdempotencyHeader, "k1"); r.status != 201 {
		t.Fatal(r.body)
	}
	os.RemoveAll(filepath.Join(e.state, apitoken.DirName, "idempotency"))
	os.MkdirAll(filepath.Join(e.state, apitoken.DirName, "idempotency"), 0o700)
	r := e.do(t, "POST", "/api/v1/registrations", tok, body, api.IdempotencyHeader, "k1")
	if r.status != 201 || strings.Contains(r.body, "previous") {
		t.Errorf("repeat: %d %s", r.status, r.body)
	}
	// Without a key, the same body is a re-registration, reported as one.
	if r := e.do(t, "POST", "/api/v1/registrations", tok, body); r.status != 201 || !strings.Contains(r.body, `"previous"`) {
		t.Errorf("without a key: %d %s", r.status, r.body)
	}
}

// folderReplies opens the idempotency records of the state folder dir,
// as the daemon's stores do.
func folderReplies(t testing.TB, dir string) idempotency.Store {
	t.Helper()
	r, err := folder.OpenReplies(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// stateOf returns the state folder of a newEnv's configuration.
func stateOf(c *api.Config) string { return string(c.Window.(folder.Window)) }
