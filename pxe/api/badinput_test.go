package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/internal/badinput"
)

// TestBadMACsAreRefusedByTheAPI runs the bad MAC table through the
// registration body's macs (the API takes no static network): 422, the rule stated,
// nothing written.
func TestBadMACsAreRefusedByTheAPI(t *testing.T) {
	e := newEnv(t, nil)
	bodies := map[string]string{
		"macs": `{"name":"a3","macs":[%q],"boot_disk":"sda"}`,
	}
	for _, bad := range badinput.MACs() {
		for field, body := range bodies {
			t.Run(bad.Name+"/"+field, func(t *testing.T) {
				r := e.do(t, http.MethodPost, "/api/v1/registrations", e.tokens["register"], fmt.Sprintf(body, bad.Value))
				if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.err.Error, bad.Want) {
					t.Errorf("POST with MAC %s: %d %s; want 422 saying %q", bad.Value, r.status, r.body, bad.Want)
				}
			})
		}
	}
	if r := e.do(t, http.MethodGet, "/api/v1/registrations", e.tokens["read"], ""); r.status != http.StatusOK || strings.Contains(r.body, "a3") {
		t.Errorf("registrations after the refusals: %d %s", r.status, r.body)
	}
}

// TestBadTTLsAreRefusedByTheAPI runs the bad TTL table through the
// window's open request: 422 stating the bounds.
func TestBadTTLsAreRefusedByTheAPI(t *testing.T) {
	e := newEnv(t, nil)
	for _, bad := range badinput.TTLs() {
		t.Run(bad.Name, func(t *testing.T) {
			r := e.do(t, http.MethodPut, "/api/v1/window", e.tokens["admin"], fmt.Sprintf(`{"ttl":%q}`, bad.Value))
			if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.err.Error, bad.Want) || r.err.Field != "ttl" {
				t.Errorf("PUT /api/v1/window ttl %s: %d %s; want 422 on ttl saying %q", bad.Value, r.status, r.body, bad.Want)
			}
		})
	}
}

// TestBadNamesAreRefusedByTheAPI runs the bad name table through the
// registration body's name: 422 on name, the one rule in the same words.
func TestBadNamesAreRefusedByTheAPI(t *testing.T) {
	e := newEnv(t, nil)
	for _, bad := range badinput.Names() {
		t.Run(bad.Name, func(t *testing.T) {
			r := e.do(t, http.MethodPost, "/api/v1/registrations", e.tokens["register"], fmt.Sprintf(`{"name":%q,"macs":["52:54:00:12:34:56"],"boot_disk":"sda"}`, bad.Value))
			if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.err.Error, bad.Want) || r.err.Field != "name" {
				t.Errorf("POST name %q: %d %s; want 422 on name saying %q", bad.Value, r.status, r.body, bad.Want)
			}
		})
	}
}

// TestJSONEndpointsRefuseOtherMediaTypes: every endpoint that reads a
// JSON body answers 415 to a body declared as something else (power
// reads it the same way, behind its BMC check); a body
// without Content-Type, or application/json with a charset, is read.
func TestJSONEndpointsRefuseOtherMediaTypes(t *testing.T) {
	e := newEnv(t, nil)
	endpoints := map[string]struct{ method, path, body string }{
		"registrations": {http.MethodPost, "/api/v1/registrations", `{"name":"a3","macs":["52:54:00:12:34:56"],"boot_disk":"sda"}`},
		"window":        {http.MethodPut, "/api/v1/window", `{"ttl":"2h"}`},
		"tokens":        {http.MethodPost, "/api/v1/tokens", `{"name":"x1","scope":"read"}`},
	}
	for name, ep := range endpoints {
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "text/json"} {
			t.Run(name+"/"+ct, func(t *testing.T) {
				r := e.do(t, ep.method, ep.path, e.tokens["admin"], ep.body, "Content-Type", ct)
				if r.status != http.StatusUnsupportedMediaType || !strings.Contains(r.err.Error, "application/json") {
					t.Errorf("%s %s as %s: %d %s; want 415 naming application/json", ep.method, ep.path, ct, r.status, r.body)
				}
			})
		}
	}
	if r := e.do(t, http.MethodPost, "/api/v1/registrations", e.tokens["register"], endpoints["registrations"].body, "Content-Type", "application/json; charset=utf-8"); r.status != http.StatusCreated {
		t.Errorf("application/json with a charset: %d %s", r.status, r.body)
	}
}
