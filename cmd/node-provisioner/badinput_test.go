package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/badinput"
	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// TestBadMACsAreRefusedByEveryCommand runs the bad MAC table through
// every way a MAC enters node-provisioner's command line: register's
// --mac and --management-mac and a discovered machine's record
// (--from-discovered). Each is exit 2 stating the rule, nothing written.
// A registration file holding one is listed as broken.
func TestBadMACsAreRefusedByEveryCommand(t *testing.T) {
	entries := map[string]func(t *testing.T, state, mac string) []string{
		"--mac": func(_ *testing.T, _, mac string) []string { return []string{"register", "a3", "--mac", mac} },
		"--management-mac": func(_ *testing.T, _, mac string) []string {
			return []string{"register", "a3", "--mac", "52:54:00:12:34:56", "--address", "10.0.0.5/24", "--gateway", "10.0.0.1", "--dns", "10.0.0.1", "--management-mac", mac}
		},
		"--from-discovered": func(t *testing.T, state, mac string) []string {
			discover(t, state, discovery.Report{NICs: []discovery.NIC{{MAC: "52:54:00:aa:00:01"}, {MAC: mac}}, DMI: discovery.DMI{Serial: "DMI-SER-1"}})
			return []string{"register", "a3", "--from-discovered", "52:54:00:aa:00:01"}
		},
	}
	for _, bad := range badinput.MACs() {
		for entry, args := range entries {
			t.Run(bad.Name+"/"+entry, func(t *testing.T) {
				state := t.TempDir()
				a := args(t, state, bad.Value)
				r := np(t, state, a...)
				if r.code != 2 || !strings.Contains(r.err, bad.Want) || !strings.Contains(r.err, entry) {
					t.Errorf("%v: exit %d, stderr %q; want 2 naming %s and saying %q", a, r.code, r.err, entry, bad.Want)
				}
				if f := files(t, filepath.Join(state, "registrations")); len(f) != 0 {
					t.Errorf("files written: %v", f)
				}
			})
		}
		t.Run(bad.Name+"/a registration file", func(t *testing.T) {
			state := t.TempDir()
			if r := np(t, state, "register", "a1", "--mac", "52:54:00:12:34:56"); r.code != 0 {
				t.Fatalf("register: %d %s", r.code, r.err)
			}
			if err := os.WriteFile(filepath.Join(state, "registrations", "a3.json"), []byte(`{"name":"a3","macs":["`+bad.Value+`"]}`), 0o600); err != nil {
				t.Fatal(err)
			}
			r := np(t, state, "list")
			if !strings.Contains(r.stdout+r.err, bad.Want) {
				t.Errorf("list: exit %d, stdout %q, stderr %q; want a3 listed as broken, saying %q", r.code, r.stdout, r.err, bad.Want)
			}
		})
	}
}

// TestBadTTLsAreRefusedByEveryCommand runs the bad TTL table through
// serve's and enable's --ttl: exit 2 stating the bounds, before any
// warning (HOME has no SSH key, which serve would warn of).
func TestBadTTLsAreRefusedByEveryCommand(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, bad := range badinput.TTLs() {
		for _, cmd := range []string{"serve", "enable"} {
			t.Run(bad.Name+"/"+cmd, func(t *testing.T) {
				r := npWithin(t, 10*time.Second, t.TempDir(), cmd, "--ttl", bad.Value, "--http", "127.0.0.1:0")
				if r.code != 2 || !strings.Contains(r.err, "--ttl") || !strings.Contains(r.err, bad.Want) {
					t.Errorf("%s --ttl %s: exit %d, stderr %q; want 2 naming --ttl and saying %q", cmd, bad.Value, r.code, r.err, bad.Want)
				}
				if strings.Contains(strings.ToLower(r.err), "warn") {
					t.Errorf("%s --ttl %s warned before the usage error: %q", cmd, bad.Value, r.err)
				}
			})
		}
	}
}

// npWithin is np under a deadline, for a command that would serve when a
// check it should make is missing.
func npWithin(t *testing.T, d time.Duration, state string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	var out, errb bytes.Buffer
	full := append([]string{"--state-dir", state, "--secrets-dir", filepath.Join(state, "secrets")}, args...)
	code := run(ctx, full, &out, &errb)
	return result{code, out.String(), errb.String()}
}

// TestBadAddressesAreRefusedByEveryCommand runs the bad listen address
// table through --http (serve, enable, daemon), --tftp and the daemon's
// --api, and its hosts and ports through --server: exit 2 naming the
// flag, before any warning, with no DNS lookup.
func TestBadAddressesAreRefusedByEveryCommand(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("NODE_PROVISIONER_TOKEN", "npt_x")
	entries := map[string]func(addr string) []string{
		"serve --http":  func(addr string) []string { return []string{"serve", "--http", addr} },
		"enable --http": func(addr string) []string { return []string{"enable", "--http", addr} },
		"serve --tftp":  func(addr string) []string { return []string{"serve", "--tftp", addr, "--dhcp-interface", "lo"} },
		"daemon --api":  func(addr string) []string { return []string{"daemon", "--api", addr} },
		"daemon --http": func(addr string) []string { return []string{"daemon", "--http", addr} },
	}
	for _, bad := range badinput.ListenAddrs() {
		for entry, args := range entries {
			t.Run(bad.Name+"/"+entry, func(t *testing.T) {
				r := npWithin(t, 10*time.Second, t.TempDir(), args(bad.Value)...)
				flag := strings.Fields(entry)[1]
				if r.code != 2 || !strings.Contains(r.err, flag) || !strings.Contains(r.err, bad.Want) || strings.Contains(r.err, "lookup") {
					t.Errorf("%s %s: exit %d, stderr %q; want 2 naming %s and saying %q", entry, bad.Value, r.code, r.err, flag, bad.Want)
				}
				if strings.Contains(strings.ToLower(r.err), "warn") {
					t.Errorf("%s %s warned before the usage error: %q", entry, bad.Value, r.err)
				}
			})
		}
	}
	for _, server := range []string{"https://999.0.0.1:8091", "https://prov.example:99999", "https://my host:8091"} {
		t.Run("--server "+server, func(t *testing.T) {
			r := npWithin(t, 10*time.Second, t.TempDir(), "--server", server, "list")
			if r.code != 2 || !strings.Contains(r.err, "--server") || strings.Contains(r.err, "lookup") {
				t.Errorf("--server %s: exit %d, stderr %q; want 2 naming --server, no lookup", server, r.code, r.err)
			}
		})
	}
}

// TestBadNamesAreRefusedByRegister runs the bad name table through
// register: exit 2, the one rule in the same words for every breach.
func TestBadNamesAreRefusedByRegister(t *testing.T) {
	for _, bad := range badinput.Names() {
		t.Run(bad.Name, func(t *testing.T) {
			state := t.TempDir()
			r := np(t, state, "register", "--mac", "52:54:00:12:34:56", "--", bad.Value)
			if r.code != 2 || !strings.Contains(r.err, bad.Want) || !strings.Contains(r.err, fmt.Sprintf("invalid name %q", bad.Value)) {
				t.Errorf("register %q: exit %d, stderr %q; want 2 saying %q", bad.Value, r.code, r.err, bad.Want)
			}
			if f := files(t, filepath.Join(state, "registrations")); len(f) != 0 {
				t.Errorf("files written: %v", f)
			}
		})
	}
}

// TestTAPPaaSNamesStillLoadFromFiles: the one rule is for new names; a
// TAPPaaS registration file with an underscore or upper case still loads.
func TestTAPPaaSNamesStillLoadFromFiles(t *testing.T) {
	state := t.TempDir()
	if r := np(t, state, "register", "a1", "--mac", "52:54:00:12:34:56"); r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	for _, name := range []string{"pve_1", "TapPaaS3"} {
		if err := os.WriteFile(filepath.Join(state, "registrations", name+".json"), []byte(`{"name":"`+name+`","macs":[]}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := np(t, state, "list")
	if r.code != 0 || !strings.Contains(r.stdout, "pve_1") || !strings.Contains(r.stdout, "TapPaaS3") || strings.Contains(r.stdout+r.err, "invalid name") {
		t.Errorf("list: exit %d, stdout %q, stderr %q; want both TAPPaaS names listed", r.code, r.stdout, r.err)
	}
}
