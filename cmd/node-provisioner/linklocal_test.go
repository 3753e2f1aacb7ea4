package main

import (
	"strings"
	"testing"
	"time"
)

// TestALinkLocalAdvertisedAddressIsAUsageError: a link-local IPv6
// address (with or without a zone) where machines would be told to dial
// it, as --base-url or as the --http that boot scripts name without one,
// is exit 2 naming the flag and saying what would do, before any
// warning.
func TestALinkLocalAdvertisedAddressIsAUsageError(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	tests := map[string][]string{
		"serve --base-url":            {"serve", "--http", "127.0.0.1:0", "--base-url", "http://[fe80::2]:8090"},
		"serve --base-url with zone":  {"serve", "--http", "127.0.0.1:0", "--base-url", "http://[fe80::2%25lo]:8090"},
		"enable --base-url":           {"enable", "--http", "127.0.0.1:0", "--base-url", "http://[fe80::2]:8090"},
		"daemon --base-url":           {"daemon", "--api", "127.0.0.1:0", "--http", "127.0.0.1:0", "--base-url", "http://[fe80::2]:8090"},
		"serve --http without a base": {"serve", "--http", "[fe80::2%lo]:0"},
		"serve --server-ip6":          {"serve", "--http", "127.0.0.1:0", "--dhcp-interface", "lo", "--server-ip6", "fe80::2"},
		"publish --answer-url":        {"publish", "--answer-url", "http://[fe80::2]:8090/answer", "--search-domain", "site.example"},
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			r := npWithin(t, 10*time.Second, t.TempDir(), args...)
			flag := strings.Fields(name)[1]
			if r.code != 2 || !strings.Contains(r.err, flag) || !strings.Contains(r.err, "link-local") || !strings.Contains(r.err, "global or unique-local IPv6 address") {
				t.Errorf("%v: exit %d, stderr %q; want 2 naming %s, saying link-local and what would do", args, r.code, r.err, flag)
			}
			if strings.Contains(strings.ToLower(r.err), "warn") {
				t.Errorf("%v warned before the usage error: %q", args, r.err)
			}
		})
	}
}
