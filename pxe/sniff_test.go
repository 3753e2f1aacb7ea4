package pxe

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

// TestTLSPortAlsoServesPlainPaths: with TLS one port speaks
// both; plain HTTP reaches only the plain paths, HTTPS reaches everything,
// and a client that sends nothing holds up no other.
func TestTLSPortAlsoServesPlainPaths(t *testing.T) {
	state := t.TempDir()
	_, fp, err := tlscert.EnsureCertificate(context.Background(), state, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		io.WriteString(w, scheme+" "+r.URL.Path)
	})
	s, _, _ := start(t, Config{
		TLS: true, StateDir: state, Backend: allowAll,
		Routes: map[string]http.Handler{"GET /boot.ipxe": echo, "GET /assets/{r}/{f}": echo, "POST /answer": echo, "GET /{$}": echo},
	})
	addr := s.Addr().String()
	// A silent client first: it must not block the requests below.
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	pinned, err := tlscert.PinnedTLSConfig(fp)
	if err != nil {
		t.Fatal(err)
	}
	secure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: pinned}}
	plain := &http.Client{Timeout: 5 * time.Second}
	type result struct {
		Status int
		Body   string
	}
	tests := map[string]struct {
		client      *http.Client
		method, url string
		want        result
	}{
		"plain script":                  {plain, "GET", "http://" + addr + "/boot.ipxe?mac=x", result{200, "http /boot.ipxe"}},
		"plain asset":                   {plain, "GET", "http://" + addr + "/assets/9.2-1/linux26", result{200, "http /assets/9.2-1/linux26"}},
		"plain answer is refused":       {plain, "POST", "http://" + addr + "/answer", result{403, "this path is served over HTTPS only"}},
		"plain status page is refused":  {plain, "GET", "http://" + addr + "/", result{403, "this path is served over HTTPS only"}},
		"plain traversal out of assets": {plain, "POST", "http://" + addr + "/assets/../answer", result{403, "this path is served over HTTPS only"}},
		"plain medium URL is served":    {plain, "GET", "http://" + addr + "/media/" + strings.Repeat("A", 43) + "/pve1.iso", result{404, "no such medium"}},
		"https answer":                  {secure, "POST", "https://" + addr + "/answer", result{200, "https /answer"}},
		"https script":                  {secure, "GET", "https://" + addr + "/boot.ipxe", result{200, "https /boot.ipxe"}},
		"https status page":             {secure, "GET", "https://" + addr + "/", result{200, "https /"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, tc.url, nil)
			resp, err := tc.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if diff := cmp.Diff(tc.want, result{resp.StatusCode, strings.TrimSpace(string(b))}); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tc.method, tc.url, diff)
			}
		})
	}
}
