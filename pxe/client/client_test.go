package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
	"github.com/plasmactl/plasma-node/pxe/window"
)

type server struct {
	state  string
	ts     *httptest.Server
	fp     string
	tokens map[apitoken.Scope]string
	// seen records the Authorization headers the server got.
	mu   sync.Mutex
	seen []string
	// drop, when set, decides to cut the connection after handling.
	drop func(r *http.Request) bool
	keys []string
}

func newServer(t *testing.T) *server {
	t.Helper()
	s := &server{state: t.TempDir(), tokens: map[apitoken.Scope]string{}}
	reg, err := folder.OpenRegistrations(s.state, nil)
	if err != nil {
		t.Fatal(err)
	}
	store, _ := folder.OpenTokens(s.state, nil)
	for _, sc := range []apitoken.Scope{apitoken.ScopeRead, apitoken.ScopeRegister, apitoken.ScopeAdmin} {
		if s.tokens[sc], err = store.Create(context.Background(), string(sc), sc, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	replies, err := folder.OpenReplies(s.state, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(api.Config{Window: folder.Window(s.state), Registry: reg, Tokens: store, Replies: replies, Events: folder.OpenEvents(folder.EventsPath(s.state), folder.EventsOptions{Poll: 10 * time.Millisecond})})
	if err != nil {
		t.Fatal(err)
	}
	s.ts = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Header.Get("Authorization"))
		s.keys = append(s.keys, r.Header.Get(api.IdempotencyHeader))
		drop := s.drop != nil && s.drop(r)
		s.mu.Unlock()
		if !drop {
			h.ServeHTTP(w, r)
			return
		}
		// Do the request, then lose the reply: the connection dies.
		h.ServeHTTP(httptest.NewRecorder(), r)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(s.ts.Close)
	s.fp = tlscert.Fingerprint(s.ts.Certificate().Raw)
	return s
}

func (s *server) client(t *testing.T, scope apitoken.Scope) *client.Client {
	t.Helper()
	c, err := client.New(client.Options{URL: s.ts.URL, Token: s.tokens[scope], Fingerprint: s.fp, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestWrongFingerprintSendsNothing: a server whose certificate is not
// the pinned one is refused in the handshake: the server never sees a
// request, so never the token. Without a pin, the system pool refuses a
// self-signed certificate just as early.
func TestWrongFingerprintSendsNothing(t *testing.T) {
	s := newServer(t)
	_, other, err := tlscert.EnsureCertificate(context.Background(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, fp := range map[string]string{"another pin": other, "system pool": ""} {
		c, err := client.New(client.Options{URL: s.ts.URL, Token: s.tokens[apitoken.ScopeAdmin], Fingerprint: fp})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Nodes(context.Background())
		if !errors.Is(err, client.ErrCertificate) {
			t.Errorf("%s: %v, want ErrCertificate", name, err)
		}
		if err != nil && strings.Contains(err.Error(), s.tokens[apitoken.ScopeAdmin]) {
			t.Errorf("%s: the error holds the token", name)
		}
	}
	if len(s.seen) != 0 {
		t.Fatalf("the server got %d requests: %q", len(s.seen), s.seen)
	}
	if _, err := s.client(t, apitoken.ScopeAdmin).Nodes(context.Background()); err != nil || len(s.seen) != 1 || s.seen[0] != "Bearer "+s.tokens[apitoken.ScopeAdmin] {
		t.Errorf("the right pin: %v, seen %d", err, len(s.seen))
	}
}

// TestErrorsMapToTheDomain: the server's refusals are the registry's,
// the window's and the token's errors.
func TestErrorsMapToTheDomain(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	reg := s.client(t, apitoken.ScopeRegister)
	pve1 := registry.Registration{Name: "pve1", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}}
	if _, err := reg.Register(ctx, pve1, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	bad, _ := client.New(client.Options{URL: s.ts.URL, Token: "npt_nope", Fingerprint: s.fp})
	pve2 := pve1
	pve2.Name = "pve2"
	_, pinErr := reg.Register(ctx, pve2, registry.RegisterOptions{})
	_, numErr := reg.Register(ctx, registry.Registration{Name: "123"}, registry.RegisterOptions{})
	_, nodeErr := reg.Node(ctx, "nope")
	_, readErr := s.client(t, apitoken.ScopeRead).Register(ctx, pve2, registry.RegisterOptions{})
	_, openErr := reg.OpenWindow(ctx, time.Hour)
	_, badErr := bad.Nodes(ctx)
	tests := []struct {
		name string
		err  error
		is   []error
		not  []error
		msg  string
	}{
		{"pin taken", pinErr, []error{registry.ErrPinTaken, registry.ErrInvalidRegistration}, []error{registry.ErrNotFound}, "is already pinned by pending registration pve1"},
		{"numeric name", numErr, []error{registry.ErrInvalidRegistration, registry.ErrInvalidName}, []error{registry.ErrPinTaken}, "not digits only"},
		{"unknown node", nodeErr, []error{registry.ErrNotFound}, nil, `no registration named "nope"`},
		{"unregister unknown", reg.Unregister(ctx, "nope"), []error{registry.ErrNotFound}, nil, `no pending registration named "nope"`},
		{"read token registering", readErr, []error{client.ErrForbidden}, []error{registry.ErrInvalidRegistration}, "403 Forbidden"},
		{"register token opening", openErr, []error{client.ErrForbidden}, []error{window.ErrOpen}, "needs admin"},
		{"wrong token", badErr, []error{client.ErrUnauthorized}, nil, "401 Unauthorized: invalid or revoked token"},
	}
	for _, tc := range tests {
		var ae *client.Error
		if !errors.As(tc.err, &ae) {
			t.Errorf("%s: %v is not a *client.Error", tc.name, tc.err)
			continue
		}
		for _, want := range tc.is {
			if !errors.Is(tc.err, want) {
				t.Errorf("%s: %v does not match %v", tc.name, tc.err, want)
			}
		}
		for _, not := range tc.not {
			if errors.Is(tc.err, not) {
				t.Errorf("%s: %v matches %v", tc.name, tc.err, not)
			}
		}
		if !strings.Contains(tc.err.Error(), tc.msg) {
			t.Errorf("%s: %q, want %q in it", tc.name, tc.err, tc.msg)
		}
	}
}

// TestRegisterRetriesWithOneKey: the first reply is lost with its
// connection; the client sends again with the same Idempotency-Key and
// gets the first result; the registration is written once.
func TestRegisterRetriesWithOneKey(t *testing.T) {
	s := newServer(t)
	dropped := 0
	s.drop = func(r *http.Request) bool {
		if r.Method == "POST" && dropped < 2 || r.Method == "GET" && dropped == 2 {
			dropped++
			return true
		}
		return false
	}
	c := s.client(t, apitoken.ScopeRegister)
	pve1 := registry.Registration{Name: "pve1", MACs: []string{"52:54:00:00:00:01"}}
	res, err := c.Register(context.Background(), pve1, registry.RegisterOptions{})
	if err != nil || res.Previous != nil {
		t.Fatalf("register: %+v %v", res, err)
	}
	if len(s.keys) != 3 || s.keys[0] == "" || s.keys[0] != s.keys[1] || s.keys[1] != s.keys[2] {
		t.Errorf("idempotency keys sent: %q", s.keys)
	}
	// A read is retried too (its first reply is lost as well).
	nodes, err := c.Nodes(context.Background())
	if err != nil || len(nodes) != 1 || nodes[0].Name != "pve1" {
		t.Errorf("nodes: %+v %v", nodes, err)
	}
	// A delete is not: its lost reply is an error.
	s.drop = func(r *http.Request) bool { return r.Method == "DELETE" }
	s.keys = nil
	if err := c.Unregister(context.Background(), "pve1"); err == nil || len(s.keys) != 1 {
		t.Errorf("unregister with its reply lost: %v after %d requests", err, len(s.keys))
	}
}

// TestEventsResume: the stream gives every event with an id, resumes
// after an id, and with FromNow only new events.
func TestEventsResume(t *testing.T) {
	s := newServer(t)
	log := folder.OpenEvents(folder.EventsPath(s.state), folder.EventsOptions{})
	defer log.Close()
	for _, n := range []string{"a", "b", "c"} {
		log.Append(t.Context(), backend.Event{Kind: events.Answer, Node: n, Status: 200})
	}
	c := s.client(t, apitoken.ScopeRead)
	collect := func(last string, n int, during func()) ([]string, []string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var ids, nodes []string
		if during != nil {
			go func() { time.Sleep(100 * time.Millisecond); during() }()
		}
		err := c.Events(ctx, last, func(id string, e backend.Event) error {
			ids, nodes = append(ids, id), append(nodes, e.Node)
			if len(nodes) == n {
				return client.ErrStop
			}
			return nil
		})
		if err != nil {
			t.Fatalf("events after %q: %v (got %v)", last, err, nodes)
		}
		return ids, nodes
	}
	ids, nodes := collect("", 3, nil)
	if !slices.Equal(nodes, []string{"a", "b", "c"}) || slices.Contains(ids, "") {
		t.Fatalf("all: %v %v", nodes, ids)
	}
	if _, nodes := collect(ids[0], 2, nil); !slices.Equal(nodes, []string{"b", "c"}) {
		t.Errorf("after a: %v", nodes)
	}
	if _, nodes := collect(client.FromNow, 1, func() { log.Append(t.Context(), backend.Event{Kind: events.Installed, Node: "d"}) }); !slices.Equal(nodes, []string{"d"}) {
		t.Errorf("from now: %v", nodes)
	}
	// A torn line of a killed writer is skipped; the stream goes on.
	f, _ := os.OpenFile(folder.EventsPath(s.state), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{\"kind\":\"ans\n")
	f.Close()
	log.Append(t.Context(), backend.Event{Kind: events.Answer, Node: "e"})
	if _, nodes := collect(ids[2], 2, nil); !slices.Equal(nodes, []string{"d", "e"}) {
		t.Errorf("after a torn line: %v", nodes)
	}
}

// TestNewRefusesWhatIsNotHTTPS: the token goes over TLS only.
func TestNewRefusesWhatIsNotHTTPS(t *testing.T) {
	for _, u := range []string{"http://prov:8091", "prov:8091", "https://user:pw@prov", ""} {
		if _, err := client.New(client.Options{URL: u}); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
	if _, err := client.New(client.Options{URL: "https://prov", Fingerprint: "zz"}); !errors.Is(err, tlscert.ErrInvalidFingerprint) {
		t.Errorf("bad fingerprint: %v", err)
	}
	_, err := client.New(client.Options{URL: "https://prov", Token: "npt_a b"})
	if err == nil || strings.Contains(err.Error(), "npt_a") {
		t.Errorf("a token with a space: %v", err)
	}
}

// TestTokensThroughTheAPI: an admin token creates, lists and revokes
// tokens; the new token works at once and stops at once; a register
// token may not manage tokens.
func TestTokensThroughTheAPI(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	admin := s.client(t, apitoken.ScopeAdmin)
	tok, err := admin.CreateToken(ctx, "pipeline", "read", 0)
	if err != nil || !strings.HasPrefix(tok, apitoken.Prefix) {
		t.Fatalf("create: %v", err)
	}
	if _, err := admin.CreateToken(ctx, "pipeline", "read", 0); err == nil || !strings.Contains(err.Error(), "token exists") {
		t.Errorf("create twice: %v", err)
	}
	if _, err := admin.CreateToken(ctx, "x", "root", 0); err == nil || !strings.Contains(err.Error(), `invalid scope "root"`) {
		t.Errorf("bad scope: %v", err)
	}
	c, _ := client.New(client.Options{URL: s.ts.URL, Token: tok, Fingerprint: s.fp})
	if _, err := c.Nodes(ctx); err != nil {
		t.Errorf("the new token: %v", err)
	}
	list, err := admin.Tokens(ctx)
	var names []string
	for _, ti := range list {
		names = append(names, ti.Name+":"+ti.Scope)
	}
	if err != nil || !slices.Equal(names, []string{"admin:admin", "pipeline:read", "read:read", "register:register"}) {
		t.Errorf("list: %v %v", names, err)
	}
	if err := admin.RevokeToken(ctx, "pipeline"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Nodes(ctx); !errors.Is(err, client.ErrUnauthorized) {
		t.Errorf("revoked: %v", err)
	}
	if err := s.client(t, apitoken.ScopeRegister).RevokeToken(ctx, "admin"); !errors.Is(err, client.ErrForbidden) {
		t.Errorf("register token revoking: %v", err)
	}
}
