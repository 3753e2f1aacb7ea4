package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// register --boot-method virtual-media needs a Redfish BMC: with an IPMI
// BMC or none it exits 2 naming why, before anything is written; with a
// Redfish BMC it is kept, and list shows it.
func TestRegisterBootMethod(t *testing.T) {
	state := t.TempDir()
	t.Setenv(bmcPasswordEnv, bmcPW)
	base := []string{"register", "pve1", "--mac", "52:54:00:00:00:01", "--boot-disk", "any"}
	tests := map[string]struct {
		args []string
		code int
		want string
	}{
		"virtual media without a BMC":     {[]string{"--boot-method", "virtual-media"}, 2, "has no BMC"},
		"virtual media with an IPMI BMC":  {[]string{"--boot-method", "virtual-media", "--bmc", "ipmi://10.0.0.5", "--bmc-user", "admin"}, 2, "speaks ipmi, which has no virtual media"},
		"an unknown boot method":          {[]string{"--boot-method", "usb"}, 2, `--boot-method: invalid boot method "usb": want "network" or "virtual-media"`},
		"an unknown media answer":         {[]string{"--boot-method", "virtual-media", "--media-answer", "nfs", "--bmc", "redfish://bmc1", "--bmc-user", "root"}, 2, `--media-answer: invalid media answer "nfs": want "iso" (the answer on the node's medium), "http" (fetched from the window) or "partition"`},
		"a media answer over the network": {[]string{"--boot-method", "network", "--media-answer", "iso"}, 2, "boots over the network"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := np(t, state, append(base, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.err, tc.want) || strings.Contains(r.err, "warning") {
				t.Errorf("exit %d %q; want %d with %q", r.code, r.err, tc.code, tc.want)
			}
			if _, err := os.Stat(filepath.Join(state, "registrations", "pve1.json")); !os.IsNotExist(err) {
				t.Errorf("a refused registration was written: %v", err)
			}
		})
	}
	r := np(t, state, append(base, "--boot-method", "virtual-media", "--media-answer", "http", "--bmc", "redfish://bmc1", "--bmc-user", "root")...)
	if r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	b, _ := os.ReadFile(filepath.Join(state, "registrations", "pve1.json"))
	if !strings.Contains(string(b), `"boot_method": "virtual-media"`) || !strings.Contains(string(b), `"media_answer": "http"`) {
		t.Errorf("registration:\n%s", b)
	}
	if r := np(t, state, "list"); !strings.Contains(r.stdout, "virtual-media/http") {
		t.Errorf("list:\n%s", r.stdout)
	}
	if r := np(t, state, "list", "-o", "json"); !strings.Contains(r.stdout, `"boot_method": "virtual-media"`) {
		t.Errorf("list -o json:\n%s", r.stdout)
	}
	r = np(t, state, "register", "pve2", "--mac", "52:54:00:00:00:02", "--boot-disk", "any", "--boot-method", "virtual-media", "--media-answer", "partition", "--bmc", "redfish://bmc2", "--bmc-user", "root")
	if r.code != 0 {
		t.Fatalf("register --media-answer partition: %d %s", r.code, r.err)
	}
	if r := np(t, state, "list"); !strings.Contains(r.stdout, "virtual-media/partition") {
		t.Errorf("list:\n%s", r.stdout)
	}
}

// A site whose boot method is virtual-media refuses a registration that
// names no boot method and has no Redfish BMC, exit 2.
func TestRegisterTakesTheSitesBootMethod(t *testing.T) {
	state := t.TempDir()
	os.MkdirAll(state, 0o700)
	os.WriteFile(filepath.Join(state, "site.json"), []byte(`{"boot_method": "virtual-media"}`), 0o600)
	r := np(t, state, "register", "pve1", "--mac", "52:54:00:00:00:01", "--boot-disk", "any")
	if r.code != 2 || !strings.Contains(r.err, "the site's boot method is virtual-media") {
		t.Errorf("exit %d %q", r.code, r.err)
	}
	if r := np(t, state, "register", "pve1", "--mac", "52:54:00:00:00:01", "--boot-disk", "any", "--boot-method", "network"); r.code != 0 {
		t.Errorf("network over the site's virtual media: exit %d %q", r.code, r.err)
	}
}
