package regbackend_test

import (
	"github.com/plasmactl/plasma-node/pxe/netboot"

	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// exactlyOverLimit is a JSON object of netboot.MaxBodySize+1 bytes, padded with
// spaces, so only its size is wrong.
func exactlyOverLimit(t *testing.T) []byte {
	t.Helper()
	b := body("9.2", "52:54:00:ba:5e:11")
	pad := netboot.MaxBodySize + 1 - len(b)
	out := append(bytes.Repeat([]byte(" "), pad), b...)
	if len(out) != netboot.MaxBodySize+1 {
		t.Fatalf("body of %d bytes, want %d", len(out), netboot.MaxBodySize+1)
	}
	return out
}

// TestHandlerRefusesHostileBodies posts bodies of wrong types, deep
// nesting and one byte over the limit: each is refused (400; 413 for
// the size, as discovery and the API say it) with a
// message, nothing is consumed or written, and the real installer is
// answered afterwards.
func TestHandlerRefusesHostileBodies(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "pve1", []string{"52:54:00:ba:5e:11"}, "sda"))
	tests := map[string]struct {
		body []byte
		msg  string
	}{
		"an array is not a system info":         {[]byte(`[]`), "want a JSON object"},
		"a string is not a system info":         {[]byte(`"x"`), "want a JSON object"},
		"a number is not a system info":         {[]byte(`1`), "want a JSON object"},
		"null is not a system info":             {[]byte(`null`), "want a JSON object"},
		"an empty body is not a system info":    {nil, "want a JSON object"},
		"100 000 open brackets are refused":     {bytes.Repeat([]byte("["), 100_000), "want a JSON object"},
		"deep nesting inside an object":         {append([]byte(`{"network_interfaces":`), bytes.Repeat([]byte("["), 100_000)...), "want a JSON object"},
		"deeply nested objects":                 {[]byte(strings.Repeat(`{"a":`, 100_000)), "want a JSON object"},
		"network_interfaces of the wrong type":  {[]byte(`{"network_interfaces":"eth0"}`), "want a JSON object"},
		"a MAC of the wrong type":               {[]byte(`{"network_interfaces":[{"link":"eth0","mac":52}]}`), "want a JSON object"},
		"a NUL byte in the body":                {[]byte("{\"network_interfaces\":[{\"mac\":\"52:54:00:ba:5e:11\x00\"}]}"), "want a JSON object"},
		"MiB + 1 bytes are over the size limit": {exactlyOverLimit(t), "over 1048576 bytes"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			status, msg, _ := e.post(t, "", "application/json", tc.body)
			want := http.StatusBadRequest
			if len(tc.body) > netboot.MaxBodySize {
				want = http.StatusRequestEntityTooLarge
			}
			if status != want || !strings.Contains(msg, tc.msg) {
				t.Errorf("status %d %q, want %d with %q", status, msg, want, tc.msg)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("refusing took %v", d)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(e.secrets, "pve1.pw")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused body wrote a secret: %v", err)
	}
	pending, err := e.reg.Pending(context.Background())
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending after the refusals: %v %v", pending, err)
	}
	if status, msg, _ := e.post(t, "", "application/json", body("9.2", "52:54:00:ba:5e:11")); status != 200 {
		t.Errorf("the real installer after the hostile bodies: %d %s", status, msg)
	}
}

// TestHandlerRefusesHostilePaths sends traversal, encoded traversal, NUL
// bytes and over-long names to the one-shot endpoints: none is served,
// also when a file of that name exists outside the first-boot folder.
func TestHandlerRefusesHostilePaths(t *testing.T) {
	e := newHandlerEnv(t)
	secret := "outside-secret-content"
	for _, p := range []string{filepath.Join(e.state, "x.sh"), filepath.Join(e.state, "events.sh"), filepath.Join(e.state, "outside.sh")} {
		if err := os.WriteFile(p, []byte(secret), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("A", 10_000)
	paths := map[string]string{
		"dot-dot in a first-boot token":         "/first-boot/..%2Foutside",
		"encoded dot-dot":                       "/first-boot/%2e%2e%2foutside",
		"double-encoded dot-dot":                "/first-boot/%252e%252e%252foutside",
		"dot-dot segments":                      "/first-boot/../../outside",
		"a NUL byte in a token":                 "/first-boot/AAAAAAAAAAAAAAAAAAAAAAAA%00",
		"a token of 10 000 characters":          "/first-boot/" + long,
		"an over-long webhook token":            "/webhook/" + long,
		"an over-long unknown path":             "/" + long,
		"dot-dot to the state folder":           "/answer/../events.jsonl",
		"encoded dot-dot to the state folder":   "/answer/%2e%2e/events.jsonl",
		"an absolute path":                      "//etc/passwd",
		"a backslash traversal":                 "/first-boot/..%5Coutside",
		"a token naming a file one level above": "/first-boot/%2E%2E%2Fx",
	}
	for name, p := range paths {
		t.Run(name, func(t *testing.T) {
			for _, method := range []string{"GET", "POST"} {
				req, err := http.NewRequest(method, e.srv.URL+p, nil)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				b.ReadFrom(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 || strings.Contains(b.String(), secret) || strings.Contains(b.String(), `"kind"`) {
					t.Errorf("%s %s: %d %q", method, truncate(p, 60), resp.StatusCode, truncate(b.String(), 200))
				}
			}
		})
	}
	// The handler still serves afterwards.
	resp, err := http.Get(e.srv.URL + "/status")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /status after the hostile paths: %d", resp.StatusCode)
	}
}
