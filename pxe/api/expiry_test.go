package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
)

// TestATokenWithATTL: POST /tokens with a ttl makes a token that says
// when it expires (in the reply and in GET /tokens) and is accepted
// until then; a ttl that is not a duration of a second or more is
// refused with 422 naming ttl, and makes nothing.
func TestATokenWithATTL(t *testing.T) {
	e := newEnv(t, nil)
	before := time.Now()
	r := e.do(t, "POST", "/api/v1/tokens", e.tokens["admin"], `{"name":"nightly","scope":"read","ttl":"720h"}`)
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var made struct {
		Token   string    `json:"token"`
		Expires time.Time `json:"expires"`
	}
	if err := json.Unmarshal([]byte(r.body), &made); err != nil {
		t.Fatal(err)
	}
	if want := before.Add(720 * time.Hour); made.Expires.Before(want.Add(-time.Second)) || made.Expires.After(want.Add(2*time.Second)) {
		t.Errorf("expires %v, want about %v", made.Expires, want)
	}
	if r := e.do(t, "GET", "/api/v1/registrations", made.Token, ""); r.status != 200 {
		t.Errorf("the new token before its expiry: %d %s", r.status, r.body)
	}
	r = e.do(t, "GET", "/api/v1/tokens", e.tokens["admin"], "")
	var list []struct {
		Name    string    `json:"name"`
		Expires time.Time `json:"expires"`
	}
	if err := json.Unmarshal([]byte(r.body), &list); err != nil {
		t.Fatal(err)
	}
	expires := map[string]bool{}
	for _, l := range list {
		expires[l.Name] = !l.Expires.IsZero()
		if l.Name == "nightly" && !l.Expires.Equal(made.Expires) {
			t.Errorf("GET /tokens: nightly expires %v, the reply said %v", l.Expires, made.Expires)
		}
	}
	if diff := cmp.Diff(map[string]bool{"gone": false, "nightly": true, "t-admin": false, "t-read": false, "t-register": false}, expires); diff != "" {
		t.Errorf("GET /tokens, which expire (-want +got):\n%s", diff)
	}
	for _, ttl := range []string{`"0s"`, `"-1h"`, `"500ms"`, `"a month"`, `"30"`} {
		r := e.do(t, "POST", "/api/v1/tokens", e.tokens["admin"], `{"name":"bad","scope":"read","ttl":`+ttl+`}`)
		if r.status != 422 || r.err.Field != "ttl" || !strings.Contains(r.err.Error, "want a duration of 1s or more") {
			t.Errorf("ttl %s: %d %s, want 422 naming ttl", ttl, r.status, r.body)
		}
	}
	if toks, _ := e.store.List(context.Background()); len(toks) != 5 {
		t.Errorf("after the refusals the store holds %d tokens, want 5", len(toks))
	}
}

// TestAnExpiredTokenIsRefused: once its expiry passed, a token is
// refused with 401 "expired token" like a revoked one, and an event
// stream opened with it ends, saying why.
func TestAnExpiredTokenIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	tok, err := e.store.Create(context.Background(), "short", apitoken.ScopeRead, time.Now().Add(1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if r := e.do(t, "GET", "/api/v1/registrations", tok, ""); r.status != 200 {
		t.Fatalf("before its expiry: %d %s", r.status, r.body)
	}
	resp := e.stream(t, tok)
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	done := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(bufio.NewReader(resp.Body))
		done <- string(b)
	}()
	select {
	case body := <-done:
		if !strings.Contains(body, ": token expired") {
			t.Errorf("the stream ended without saying why:\n%s", body)
		}
	case <-time.After(6 * time.Second):
		t.Fatal("the stream of an expired token still runs 6 s on")
	}
	r := e.do(t, "GET", "/api/v1/registrations", tok, "")
	if r.status != 401 || r.err.Error != "expired token" {
		t.Errorf("after its expiry: %d %s, want 401 expired token", r.status, r.body)
	}
	if r := e.do(t, "GET", "/api/v1/registrations", e.tokens["read"], ""); r.status != 200 {
		t.Errorf("a token without an expiry: %d %s", r.status, r.body)
	}
}
