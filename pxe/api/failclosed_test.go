package api_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// stream opens an event stream with token.
func (e *env) stream(t *testing.T, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", e.ts.URL+"/api/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestEventStreamEndsWhenItsTokenIsRevoked: an open stream ends (within
// seconds, with a last comment saying why) once its token is revoked by
// another process, as the next request with it would be refused.
func TestEventStreamEndsWhenItsTokenIsRevoked(t *testing.T) {
	e := newEnv(t, nil)
	resp := e.stream(t, e.tokens["read"])
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	other, _ := folder.OpenTokens(e.state, nil)
	if err := other.Revoke(context.Background(), "t-read"); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(bufio.NewReader(resp.Body))
		done <- string(b)
	}()
	select {
	case body := <-done:
		if !strings.Contains(body, ": token revoked") {
			t.Errorf("the stream ended without saying why:\n%s", body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream of a revoked token still runs after 5 s")
	}
}

// TestEventStreamsAreBoundedPerToken: one token holds at most
// MaxStreamsPerToken streams (429 past it), so another token still gets
// one while the total bound has room.
func TestEventStreamsAreBoundedPerToken(t *testing.T) {
	e := newEnv(t, func(c *api.Config) { c.MaxStreams, c.MaxStreamsPerToken = 10, 2 })
	for i := range 2 {
		if r := e.stream(t, e.tokens["read"]); r.StatusCode != 200 {
			t.Fatalf("stream %d: %d", i, r.StatusCode)
		}
	}
	if r := e.do(t, "GET", "/api/v1/events", e.tokens["read"], ""); r.status != 429 || !strings.Contains(r.err.Error, `token "t-read" holds 2 event streams open already`) {
		t.Errorf("a third stream of the token: %d %s, want 429", r.status, r.body)
	}
	if r := e.stream(t, e.tokens["admin"]); r.StatusCode != 200 {
		t.Errorf("another token's stream: %d, want 200", r.StatusCode)
	}
}

// TestAPIDecodesJSONStrictly: the token, window, power and registration
// endpoints take keys spelt exactly, each once: a key in another case or
// given twice is refused with 400 naming it, and nothing is made (no
// admin token from {"scope":"read","Scope":"admin"}).
func TestAPIDecodesJSONStrictly(t *testing.T) {
	e := newEnv(t, func(c *api.Config) { c.Power = &fakePower{} })
	tests := []struct {
		name, method, path, body string
		msg, field               string
	}{
		{"a key in another case", "POST", "/api/v1/tokens", `{"name":"x","scope":"read","Scope":"admin"}`, `unknown field "Scope" (keys are case-sensitive: "scope")`, "Scope"},
		{"a key given twice", "POST", "/api/v1/tokens", `{"name":"x","scope":"read","scope":"admin"}`, `key "scope" is given twice`, "scope"},
		{"the ttl in upper case", "PUT", "/api/v1/window", `{"TTL":"1h"}`, `unknown field "TTL"`, "TTL"},
		{"the ttl twice", "PUT", "/api/v1/window", `{"ttl":"1h","ttl":"1ns"}`, `key "ttl" is given twice`, "ttl"},
		{"an unknown key", "PUT", "/api/v1/window", `{"ttl":"1h","color":"red"}`, `unknown field "color"`, "color"},
		{"the power action in another case", "POST", "/api/v1/registrations/pve1/power", `{"Action":"on"}`, `unknown field "Action"`, "Action"},
		{"a registration's name twice", "POST", "/api/v1/registrations", `{"name":"pve1","name":"pve2","macs":[]}`, `key "name" is given twice`, "name"},
		{"a nested key twice", "POST", "/api/v1/registrations", `{"name":"pve1","bmc":{"address":"a","address":"b"}}`, `key "bmc.address" is given twice`, "bmc.address"},
		{"a bmc key in two cases", "POST", "/api/v1/registrations", `{"name":"pve1","bmc":{"url":"ipmi://10.0.0.9","URL":"ipmi://10.0.0.8","user":"admin"},"bmc_password":"pw"}`, `unknown field "bmc.URL" (keys are case-sensitive: "bmc.url")`, "bmc.URL"},
		{"a bmc key in another case alone", "POST", "/api/v1/registrations", `{"name":"pve1","bmc":{"Url":"ipmi://10.0.0.9","user":"admin"},"bmc_password":"pw"}`, `unknown field "bmc.Url"`, "bmc.Url"},
		{"an unknown bmc key", "POST", "/api/v1/registrations", `{"name":"pve1","bmc":{"url":"ipmi://10.0.0.9","user":"admin","usr":"x"},"bmc_password":"pw"}`, `unknown field "bmc.usr" (want boot_mode, cipher_suite, fingerprint, media_tls, privilege, secret, session, url, user)`, "bmc.usr"},
		{"a bmc key twice", "POST", "/api/v1/registrations", `{"name":"pve1","bmc":{"url":"ipmi://10.0.0.9","user":"admin","user":"root"},"bmc_password":"pw"}`, `key "bmc.user" is given twice`, "bmc.user"},
		{"an unknown pool key", "POST", "/api/v1/registrations", `{"name":"pve1","pools":[{"name":"tank","layout":"single","disks":["sdb"],"dsks":["sdc"]}]}`, `unknown field "pools.dsks"`, "pools.dsks"},
		{"a pool key in another case", "POST", "/api/v1/registrations", `{"name":"pve1","pools":[{"name":"tank","Layout":"mirror","layout":"single","disks":["sdb"]}]}`, `unknown field "pools.Layout" (keys are case-sensitive: "pools.layout")`, "pools.Layout"},
		{"a pool key twice in the second pool", "POST", "/api/v1/registrations", `{"name":"pve1","pools":[{"name":"tank","layout":"single","disks":["sdb"]},{"name":"tonk","name":"tunk","layout":"single","disks":["sdc"]}]}`, `key "pools.name" is given twice`, "pools.name"},
		{"the ttl in two cases", "PUT", "/api/v1/window", `{"ttl":"1h","Ttl":"2h"}`, `unknown field "Ttl" (keys are case-sensitive: "ttl")`, "Ttl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, tc.method, tc.path, e.tokens["admin"], tc.body)
			if r.status != 400 || !strings.Contains(r.err.Error, tc.msg) || r.err.Field != tc.field {
				t.Errorf("%s %s %s: %d %s, want 400 with %q (field %q)", tc.method, tc.path, tc.body, r.status, r.body, tc.msg, tc.field)
			}
			if r := e.do(t, "GET", "/api/v1/registrations/pve1", e.tokens["admin"], ""); r.status != 404 {
				t.Errorf("%s %s %s was refused but wrote pve1: GET %d %s", tc.method, tc.path, tc.body, r.status, r.body)
			}
		})
	}
	toks, err := e.store.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range toks {
		if tk.Name == "x" {
			t.Errorf("a refused request made token x (scope %s)", tk.Scope)
		}
	}
}
