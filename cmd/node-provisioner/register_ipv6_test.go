package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRegisterTakesAnIPv6StaticNetwork: register --address, --gateway and
// --dns take an IPv6 network, kept in the registration; a DNS server of
// the other family is exit 2 saying so, nothing written.
func TestRegisterTakesAnIPv6StaticNetwork(t *testing.T) {
	state := t.TempDir()
	r := np(t, state, "register", "v6", "--mac", "52:54:00:12:34:56", "--address", "2001:db8:20::11/64", "--gateway", "2001:db8:20::1", "--dns", "2001:db8:20::53")
	if r.code != 0 {
		t.Fatalf("register: exit %d, stderr %q", r.code, r.err)
	}
	b, err := os.ReadFile(filepath.Join(state, "registrations", "v6.json"))
	if err != nil || !strings.Contains(string(b), `"cidr": "2001:db8:20::11/64"`) || !strings.Contains(string(b), `"gateway": "2001:db8:20::1"`) || !strings.Contains(string(b), `"dns": "2001:db8:20::53"`) {
		t.Errorf("registration file %v:\n%s", err, b)
	}
	r = np(t, state, "register", "v6b", "--mac", "52:54:00:12:34:57", "--address", "2001:db8:20::12/64", "--gateway", "2001:db8:20::1", "--dns", "10.0.0.53")
	if r.code != 2 || !strings.Contains(r.err, "DNS server 10.0.0.53 is not an IPv6 address as 2001:db8:20::12/64 is") {
		t.Errorf("an IPv4 DNS server for an IPv6 address: exit %d, stderr %q; want 2 saying so", r.code, r.err)
	}
	if _, err := os.Stat(filepath.Join(state, "registrations", "v6b.json")); !os.IsNotExist(err) {
		t.Errorf("v6b written: %v", err)
	}
}
