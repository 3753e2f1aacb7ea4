package pxe

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/hostport"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// needIPv6 skips a test (fails it under PLASMA_E2E=1) when the host has
// no IPv6 loopback.
func needIPv6(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		skipOrFail(t, "no IPv6 loopback: %v", err)
		return
	}
	ln.Close()
}

// TestTheWindowServesOverIPv6: a TLS window listening on an IPv6
// address, or on every address (":0", as the default :8090 does), serves
// iPXE's plain script and the installer's HTTPS answer over IPv6, with
// URLs whose IPv6 host is in brackets; the every-address window serves
// IPv4 as before.
func TestTheWindowServesOverIPv6(t *testing.T) {
	needIPv6(t)
	tests := map[string]struct {
		listen string
		// dial are the hosts the test reaches the window at.
		dial []string
	}{
		"an IPv6 listen address":               {"[::1]:0", []string{"::1"}},
		"every address, IPv4 and IPv6 at once": {":0", []string{"::1", "127.0.0.1"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			state := t.TempDir()
			reg, err := folder.OpenRegistrations(state, nil)
			if err != nil {
				t.Fatal(err)
			}
			labRelease(t, state, "9.1-1")
			cfg := nodeProvisioner(t, Config{StateDir: state, HTTPAddr: tc.listen, TLS: true, TTL: time.Minute}, filepath.Join(t.TempDir(), "secrets"))
			srv, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ctx) }()
			t.Cleanup(func() { cancel(); <-errc })
			select {
			case <-srv.Ready():
			case err := <-errc:
				t.Fatal(err)
			}
			_, port, _ := net.SplitHostPort(srv.Addr().String())
			w, err := window.Read(state)
			for end := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(end); w, err = window.Read(state) {
				time.Sleep(10 * time.Millisecond)
			}
			if err != nil {
				t.Fatal(err)
			}
			pinned, err := tlscert.PinnedTLSConfig(w.CertFingerprint)
			if err != nil {
				t.Fatal(err)
			}
			secure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: pinned}}
			sysinfo, err := os.ReadFile(filepath.Join("..", "answer", "testdata", "sysinfo", "pve-9.2-synthetic.json"))
			if err != nil {
				t.Fatal(err)
			}
			for i, host := range tc.dial {
				name := "v6node" + string(rune('a'+i))
				if _, err := reg.Put(t.Context(), labReg(t, name, "sda", labMAC)); err != nil {
					t.Fatal(err)
				}
				hp := net.JoinHostPort(host, port)
				code, script := fetch(t, http.DefaultClient, "GET", "http://"+hp+"/boot.ipxe?mac="+labMAC+"&platform=efi", "")
				if code != http.StatusOK || !strings.Contains(script, "kernel ") {
					t.Fatalf("script over %s: %d %s", host, code, script)
				}
				if tc.listen == "[::1]:0" && !strings.Contains(script, "http://"+hp+"/assets/9.1-1/") {
					t.Errorf("script over %s names its assets elsewhere than http://%s:\n%s", host, hp, script)
				}
				code, toml := fetch(t, secure, "POST", "https://"+hp+"/answer", string(sysinfo))
				if code != http.StatusOK {
					t.Fatalf("answer over %s: %d %s", host, code, toml)
				}
				a, err := answer.Decode([]byte(toml), answer.Version92)
				if err != nil {
					t.Fatalf("answer over %s: %v\n%s", host, err, toml)
				}
				if a.PostInstallationWebhook == nil || !strings.HasPrefix(a.PostInstallationWebhook.URL, "https://"+hp+"/webhook/") {
					t.Errorf("answer over %s: webhook %+v, want it at https://%s", host, a.PostInstallationWebhook, hp)
				}
				if _, err := reg.Get(t.Context(), name); err == nil {
					t.Errorf("%s still pending after its answer over %s", name, host)
				}
			}
			if tc.listen == "[::1]:0" && w.URL != "https://[::1]:"+port+"/answer" {
				t.Errorf("window record URL %q, want https://[::1]:%s/answer", w.URL, port)
			}
		})
	}
}

// fetch sends one request with c and returns its status and body.
func fetch(t *testing.T, c *http.Client, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestNewRefusesALinkLocalAdvertisedAddress: New refuses a link-local
// IPv6 address (with or without a zone) where machines would be told to
// dial it, naming the setting and what would do: the base URL, or the
// listen address when boot scripts would name it (no base URL, no DHCP
// interface). Listening on one behind a base URL is fine.
func TestNewRefusesALinkLocalAdvertisedAddress(t *testing.T) {
	tests := map[string]struct {
		cfg          Config
		field, value string
	}{
		"a link-local base URL":                  {Config{BaseURL: "http://[fe80::2]:8090"}, "BaseURL", "http://[fe80::2]:8090"},
		"a link-local base URL with a zone":      {Config{BaseURL: "http://[fe80::2%25eth0]:8090"}, "BaseURL", "http://[fe80::2%25eth0]:8090"},
		"a link-local listen address advertised": {Config{HTTPAddr: "[fe80::2%eth0]:8090"}, "HTTPAddr", "[fe80::2%eth0]:8090"},
		"a link-local IPv6 server address":       {Config{DHCPInterface: "eth0", StateDir: "/nonexistent", ServerIP6: netip.MustParseAddr("fe80::2")}, "ServerIP6", "fe80::2"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.cfg)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field || ce.Value != tc.value || !strings.Contains(err.Error(), "link-local") ||
				!strings.Contains(err.Error(), hostport.AdvertiseRule) {
				t.Errorf("New = %v; want a %s ConfigError for %s saying link-local and what would do", err, tc.field, tc.value)
			}
		})
	}
	if _, err := New(Config{HTTPAddr: "[fe80::2%eth0]:8090", BaseURL: "http://[2001:db8::2]:8090"}); err != nil {
		t.Errorf("a link-local listen address behind a global base URL: %v", err)
	}
}

// TestScriptBases: on a dual-stack DHCP interface boot scripts name the
// IPv4 address for IPv4 clients and the IPv6 address for IPv6 ones; a
// one-family segment and a base URL have one base for all.
func TestScriptBases(t *testing.T) {
	v4, v6 := netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("2001:db8::2")
	tests := map[string]struct {
		baseURL         string
		ip4, ip6        netip.Addr
		wantBase, want6 string
	}{
		"a dual-stack segment has a base per family": {"", v4, v6, "http://10.0.0.2:8090", "http://[2001:db8::2]:8090"},
		"an IPv4-only segment has one":               {"", v4, netip.Addr{}, "http://10.0.0.2:8090", ""},
		"an IPv6-only segment has one":               {"", netip.Addr{}, v6, "http://[2001:db8::2]:8090", ""},
		"a base URL names the window for both":       {"http://prov.example:8090/", v4, v6, "http://prov.example:8090", ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			base, base6 := scriptBases(tc.baseURL, tc.ip4, tc.ip6, "8090")
			if diff := cmp.Diff([]string{tc.wantBase, tc.want6}, []string{base, base6}); diff != "" {
				t.Errorf("scriptBases (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNewRefusesABadIPv6ServerAddress: the window's IPv6 address must be
// a global or unique-local IPv6 address, on a DHCP interface.
func TestNewRefusesABadIPv6ServerAddress(t *testing.T) {
	tests := map[string]Config{
		"an IPv4 address":        {DHCPInterface: "eth0", StateDir: "/nonexistent", ServerIP6: netip.MustParseAddr("10.0.0.2")},
		"an IPv4-mapped address": {DHCPInterface: "eth0", StateDir: "/nonexistent", ServerIP6: netip.MustParseAddr("::ffff:10.0.0.2")},
		"no DHCP interface":      {StateDir: "/nonexistent", ServerIP6: netip.MustParseAddr("2001:db8::2")},
	}
	for name, cfg := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := New(cfg)
			var ce *ConfigError
			if !errors.As(err, &ce) || (ce.Field != "ServerIP6" && ce.Field != "DHCPInterface") {
				t.Errorf("New = %v; want a ServerIP6 or DHCPInterface ConfigError", err)
			}
		})
	}
}
