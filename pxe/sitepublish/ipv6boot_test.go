package sitepublish

import (
	"errors"
	"testing"

	"github.com/plasmactl/plasma-node/internal/hostport"
)

func TestIPv6BootGolden(t *testing.T) {
	for _, f := range []Format{FormatDnsmasq, FormatKea, FormatOPNsense} {
		got, err := IPv6Boot(f, "http://[2001:db8::2]:8090/")
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "ipv6-boot-"+string(f)+".txt", got)
	}
}

func TestIPv6BootRefusals(t *testing.T) {
	tests := map[string]struct {
		format Format
		window string
		want   error
		msg    string
	}{
		"a link-local window is refused": {FormatDnsmasq, "http://[fe80::2]:8090", ErrWindowURL,
			`window URL cannot be published: "http://[fe80::2]:8090": fe80::2 is a link-local address (` + hostport.AdvertiseRule + ")"},
		"a zoned window is refused": {FormatDnsmasq, "http://[fe80::2%25eth0]:8090", ErrWindowURL, ""},
		"a window without a scheme is refused": {FormatKea, "[2001:db8::2]:8090", ErrWindowURL,
			`window URL cannot be published: "[2001:db8::2]:8090": want the window's absolute http:// or https:// URL, such as http://[2001:db8::2]:8090`},
		"a window with a query is refused": {FormatKea, "http://[2001:db8::2]:8090/?a=b", ErrWindowURL, ""},
		"a DNS format is refused": {FormatZone, "http://[2001:db8::2]:8090", ErrFormat,
			`unknown site configuration format "zone": IPv6 boot lines are written for dnsmasq, kea and opnsense`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := IPv6Boot(tc.format, tc.window)
			if !errors.Is(err, tc.want) {
				t.Fatalf("%v; want %v", err, tc.want)
			}
			if tc.msg != "" && err.Error() != tc.msg {
				t.Errorf("error %q; want %q", err, tc.msg)
			}
		})
	}
}
