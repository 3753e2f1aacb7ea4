package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/badinput"
)

// TestBadDomainsAreRefusedByEveryCommand runs the bad domain table (the
// one plasma-node's platform domains are run against) through the site
// domain's entry points: serve's, enable's and the daemon's --domain
// (exit 2 naming the flag, before any warning) and site.json's domain
// (exit 2 naming the file). None opens a window.
func TestBadDomainsAreRefusedByEveryCommand(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, bad := range badinput.Domains() {
		for _, cmd := range [][]string{{"serve", "--ttl", "1m"}, {"enable", "--ttl", "1m"}, {"daemon", "--api", "127.0.0.1:0"}} {
			t.Run(bad.Name+"/"+cmd[0], func(t *testing.T) {
				r := npWithin(t, 10*time.Second, t.TempDir(), append(cmd, "--http", "127.0.0.1:0", "--domain", bad.Value)...)
				if r.code != 2 || !strings.Contains(r.err, "--domain") || !strings.Contains(r.err, bad.Want) {
					t.Errorf("%s --domain %q: exit %d, stderr %q; want 2 naming --domain and saying %q", cmd[0], bad.Value, r.code, r.err, bad.Want)
				}
				if strings.Contains(strings.ToLower(r.err), "warn") {
					t.Errorf("%s --domain %q warned before the usage error: %q", cmd[0], bad.Value, r.err)
				}
			})
		}
		t.Run(bad.Name+"/site.json", func(t *testing.T) {
			state := t.TempDir()
			if err := os.WriteFile(filepath.Join(state, "site.json"), []byte(`{"domain":"`+bad.Value+`"}`), 0o600); err != nil {
				t.Fatal(err)
			}
			r := npWithin(t, 10*time.Second, state, "serve", "--ttl", "1m", "--http", "127.0.0.1:0")
			if r.code != 2 || !strings.Contains(r.err, "site.json") || !strings.Contains(r.err, bad.Want) {
				t.Errorf("site.json domain %q: exit %d, stderr %q; want 2 naming site.json and saying %q", bad.Value, r.code, r.err, bad.Want)
			}
		})
	}
}
