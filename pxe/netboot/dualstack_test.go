package netboot

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/bootassets"
)

// TestADualStackWindowNamesTheRequestsFamily: a window with an IPv4 and
// an IPv6 base URL (a dual-stack segment) names, in every boot script
// and grub configuration, the address of the family the request came
// over: an IPv6 client gets the IPv6 URL, an IPv4 client (also one a
// dual-stack listener sees IPv4-mapped) the IPv4 URL.
func TestADualStackWindowNamesTheRequestsFamily(t *testing.T) {
	const (
		v6Client     = "[2001:db8:77::10]:40000"
		v4Client     = "10.77.0.10:40000"
		mappedClient = "[::ffff:10.77.0.10]:40000"
		install      = "/boot.ipxe?mac=" + testMAC1 + "&platform=efi"
	)
	tests := map[string]struct {
		remote, path, golden string
	}{
		"an IPv6 client's install script names the IPv6 address": {v6Client, install, "install-efi-ipv6.ipxe"},
		"an IPv4 client's install script names the IPv4 address": {v4Client, install, "install-efi.ipxe"},
		"an IPv4-mapped client is an IPv4 client":                {mappedClient, install, "install-efi.ipxe"},
		"an IPv6 client is asked again at the IPv6 address":      {v6Client, "/boot.ipxe", "rechain-ipv6.ipxe"},
		"an IPv4 client is asked again at the IPv4 address":      {v4Client, "/boot.ipxe", "rechain.ipxe"},
		"an IPv6 grub loads its entry from the IPv6 address":     {v6Client, "/" + GrubConfigName, "loader-ipv6.grub"},
		"an IPv6 grub's entry names the IPv6 address":            {v6Client, grubScriptPath + "?mac=" + testMAC1, "dualstack-entry-ipv6.grub"},
		"an IPv4 grub's entry names the IPv4 address":            {v4Client, grubScriptPath + "?mac=" + testMAC1, "dualstack-entry-ipv4.grub"},
	}
	e := newBootEnv(t, Config{BaseURL6: testBase6}, testReg(t, "pve1", "sda", testMAC1))
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			req.RemoteAddr = tc.remote
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200; body %q", rec.Code, rec.Body)
			}
			goldenHTTP(t, tc.golden, rec.Body.String())
		})
	}
}

// TestNewRefusesABadIPv6BaseURL: the IPv6 base URL is checked as the
// base URL is, and must name an IPv6 address.
func TestNewRefusesABadIPv6BaseURL(t *testing.T) {
	for name, base6 := range map[string]string{
		"an IPv4 address":        "http://10.77.0.2:8090",
		"a link-local address":   "http://[fe80::1]:8090",
		"an unspecified address": "http://[::]:8090",
		"a host name":            "http://window.example:8090",
		"no URL at all":          "[2001:db8::2]:8090",
	} {
		t.Run(name, func(t *testing.T) {
			e := newBootEnv(t, Config{})
			cfg := e.h.cfg
			cfg.BaseURL6 = base6
			if _, err := New(cfg); err == nil {
				t.Errorf("New took the IPv6 base URL %q", base6)
			}
		})
	}
}

// TestADualStackGrubReadByTFTPNamesThePeersFamily: the entry a grub
// with http reads by TFTP fetches the kernel from the window's address
// of the family its TFTP request came over.
func TestADualStackGrubReadByTFTPNamesThePeersFamily(t *testing.T) {
	for peer, want := range map[string]string{
		"[2001:db8:77::10]:1069": "(http,[2001:db8:77::2]:8090)/assets/",
		"10.77.0.120:1069":       "(http,10.77.0.2:8090)/assets/",
	} {
		e := newBootEnv(t, Config{BaseURL6: testBase6}, testReg(t, "pve1", "sda", testMAC1))
		writeManifest(t, e.state, &bootassets.SecureBootChain{Source: bootassets.ChainFromFolder, GrubHTTP: true})
		data, _, ok, err := e.h.TFTPFile(context.Background(), "grub/machine/"+testMAC1+".cfg", netip.MustParseAddrPort(peer))
		if err != nil || !ok || !strings.Contains(string(data), want) {
			t.Errorf("entry by TFTP from %s (ok %v, err %v) lacks %q:\n%s", peer, ok, err, want, data)
		}
	}
}
