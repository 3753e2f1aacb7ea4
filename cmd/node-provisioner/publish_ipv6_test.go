package main

import (
	"strings"
	"testing"
)

// TestPublishIPv6Boot: publish --ipv6-boot prints what the site's
// DHCPv6 server gives iPXE, for one format or the three DHCP servers;
// a link-local window and a DNS format are usage errors naming the flag.
func TestPublishIPv6Boot(t *testing.T) {
	state := t.TempDir()
	tests := map[string]struct {
		args []string
		code int
		want []string // in stdout (0) or stderr (2)
	}{
		"dnsmasq's lines": {args: []string{"--ipv6-boot", "http://[2001:db8::2]:8090", "--format", "dnsmasq"},
			want: []string{"dhcp-userclass=set:ipxe6,iPXE\ndhcp-option=tag:ipxe6,option6:bootfile-url,http://[2001:db8::2]:8090/boot.ipxe\n"}},
		"the three servers' by default": {args: []string{"--ipv6-boot", "http://[2001:db8::2]:8090"},
			want: []string{"option6:bootfile-url", `"name": "bootfile-url"`, "Bootfile URL http://[2001:db8::2]:8090/boot.ipxe"}},
		"a link-local window": {args: []string{"--ipv6-boot", "http://[fe80::2]:8090"}, code: 2, want: []string{"--ipv6-boot: window URL cannot be published: \"http://[fe80::2]:8090\": a link-local address"}},
		"a DNS format":        {args: []string{"--ipv6-boot", "http://[2001:db8::2]:8090", "--format", "zone"}, code: 2, want: []string{"--format: unknown site configuration format \"zone\": IPv6 boot lines are written for dnsmasq, kea and opnsense"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := np(t, state, append([]string{"publish"}, tc.args...)...)
			out := r.stdout
			if tc.code != 0 {
				out = r.err
			}
			for _, w := range tc.want {
				if r.code != tc.code || !strings.Contains(out, w) {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit %d with %q", r.code, r.stdout, r.err, tc.code, w)
				}
			}
		})
	}
}
