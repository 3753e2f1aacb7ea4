package agent

import (
	"strings"
	"testing"
)

func TestWantsIPv6(t *testing.T) {
	for url, want := range map[string]bool{
		"http://[fd77:42::2]:8090/discovery": true,
		"http://10.77.0.2:8090/discovery":    false,
		"http://[::ffff:10.0.0.2]:8090/x":    false,
		"http://window.example:8090/x":       false,
	} {
		if got := wantsIPv6(Target{URL: url}); got != want {
			t.Errorf("wantsIPv6(%s) = %t; want %t", url, got, want)
		}
	}
}

func TestGlobalIPv6(t *testing.T) {
	tests := map[string]struct {
		ifInet6   string
		addr, nic string
	}{
		"the SLAAC address after the link-local one": {
			ifInet6: "00000000000000000000000000000001 01 80 10 80       lo\n" +
				"fe80000000000000505400fffe774210 02 40 20 80     eth0\n" +
				"fd770042000000005054 02 40 00 00     eth0\n" + // malformed: skipped
				"fd770042000000005054 00fffe774210 02 40 00 00 eth0\n" +
				"fd77004200000000505400fffe774210 02 40 00 00     eth0\n",
			addr: "fd77:42::5054:ff:fe77:4210", nic: "eth0"},
		"a tentative address is not taken yet": {
			ifInet6: "fd77004200000000505400fffe774210 02 40 00 40     eth0\n"},
		"no global address": {
			ifInet6: "fe80000000000000505400fffe774210 02 40 20 80     eth0\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, nic, ok := globalIPv6(strings.NewReader(tc.ifInet6))
			if ok != (tc.addr != "") || (ok && (a.String() != tc.addr || nic != tc.nic)) {
				t.Errorf("globalIPv6 = %v %q %t; want %q %q", a, nic, ok, tc.addr, tc.nic)
			}
		})
	}
}
