package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRegisterListUnregister(t *testing.T) {
	state := t.TempDir()
	r := np(t, state, "register", "pve3", "--mac", "AA-BB-CC-DD-EE-FF", "--boot-disk", "25414A800205", "--pool", "tanka1=single:50026B73842AD86F")
	if r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	b, err := os.ReadFile(filepath.Join(state, "registrations", "pve3.json"))
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	json.Unmarshal(b, &reg)
	if diff := cmp.Diff([]any{"aa:bb:cc:dd:ee:ff"}, reg["macs"]); diff != "" || reg["boot_disk"] != "25414A800205" {
		t.Errorf("registration file: %s\n%s", diff, b)
	}
	if r := np(t, state, "register", "pve3", "--mac", "aa:bb:cc:dd:ee:01"); r.code != 0 || !strings.Contains(r.stdout, "Re-registered") {
		t.Errorf("re-register: %d %q %q", r.code, r.stdout, r.err)
	}
	r = np(t, state, "list", "-o", "json")
	var st []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || len(st) != 1 || st[0]["state"] != "pending" {
		t.Errorf("list -o json = %s (%v)", r.stdout, err)
	}
	if r := np(t, state, "list"); !strings.Contains(r.stdout, "pve3") || !strings.Contains(r.stdout, "pending") {
		t.Errorf("list:\n%s", r.stdout)
	}
	if r := np(t, state, "unregister", "pve3"); r.code != 0 {
		t.Errorf("unregister: %d %s", r.code, r.err)
	}
	if r := np(t, state, "unregister", "pve3"); r.code != 1 || !strings.Contains(r.err, "pve3") {
		t.Errorf("unregister of an unknown name: exit %d %q, want 1", r.code, r.err)
	}
}

func TestRegisterRefusesBadInput(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"a bad MAC":              {[]string{"register", "n1", "--mac", "aa:bb:cc"}, "invalid MAC address"},
		"a bad pool spec":        {[]string{"register", "n1", "--pool", "tank=raid5:sdb"}, "invalid pool layout"},
		"a pool without disks":   {[]string{"register", "n1", "--pool", "tank=mirror:"}, "no disks"},
		"a bad boot disk":        {[]string{"register", "n1", "--boot-disk", "/dev/sda"}, "--boot-disk"},
		"a bad name":             {[]string{"register", "bad name!"}, "invalid"},
		"a missing key file":     {[]string{"register", "n1", "--ssh-key", "/nonexistent/key.pub"}, "--ssh-key"},
		"an abbreviated flag":    {[]string{"register", "n1", "--boot", "sda"}, "unknown flag: --boot"},
		"no name":                {[]string{"register"}, "usage: node-provisioner register"},
		"a negative ttl":         {[]string{"serve", "--ttl", "-1s"}, "--ttl"},
		"a zero ttl":             {[]string{"serve", "--ttl", "0s"}, "--ttl"},
		"a spaced kernel arg":    {[]string{"serve", "--kernel-arg", "console=ttyS0 quiet"}, "--kernel-arg"},
		"a bad domain":           {[]string{"serve", "--domain", "bad domain"}, "--domain"},
		"a bad country":          {[]string{"serve", "--country", "Atlantis"}, "site settings"},
		"a daemon's bad domain":  {[]string{"daemon", "--domain", "bad domain"}, "--domain"},
		"an upper-case name":     {[]string{"register", "PVE1"}, "host name"},
		"an underscore name":     {[]string{"register", "pve_1"}, "host name"},
		"an unknown tls command": {[]string{"tls", "bogus"}, `unknown command "bogus" for "node-provisioner tls"`},
		"an unknown help topic":  {[]string{"help", "nosuch"}, `unknown help topic "nosuch"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			state := t.TempDir()
			r := np(t, state, tc.args...)
			if r.code != 2 || !strings.Contains(r.err, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 containing %q", r.code, r.err, tc.want)
			}
			if f := files(t, filepath.Join(state, "registrations")); len(f) != 0 {
				t.Errorf("files written: %v", f)
			}
		})
	}
}

// TestRegisterRefusesANumericName: every installer refuses a purely
// numeric host name (the Fqdn type, proxmox-network-types/src/fqdn.rs), so
// register refuses it as bad input, exit 2.
func TestRegisterRefusesANumericName(t *testing.T) {
	state := t.TempDir()
	r := np(t, state, "register", "123", "--mac", "aa:bb:cc:dd:ee:01", "--boot-disk", "sda")
	if r.code != 2 || !strings.Contains(r.err, "not digits only") {
		t.Fatalf("register 123: exit %d, %s", r.code, r.err)
	}
	if got := files(t, filepath.Join(state, "registrations")); len(got) != 0 {
		t.Errorf("files written: %v", got)
	}
	if r := np(t, state, "register", "n123", "--mac", "aa:bb:cc:dd:ee:01", "--boot-disk", "sda"); r.code != 0 {
		t.Errorf("register n123: exit %d, %s", r.code, r.err)
	}
}

// TestRegisterDuplicatePinsAndReplacement: a pin another pending
// registration holds is refused (exit 2, naming it) until --replace moves
// it; re-registering a name warns on stderr with what changed, so that a
// dropped --boot-disk is seen.
func TestRegisterDuplicatePinsAndReplacement(t *testing.T) {
	state := t.TempDir()
	if r := np(t, state, "register", "a1", "--mac", "52:54:00:00:00:01", "--boot-disk", "25414A800205"); r.code != 0 || strings.Contains(r.err, "warning") {
		t.Fatalf("register a1: %d %s", r.code, r.err)
	}
	for _, args := range [][]string{
		{"register", "a2", "--mac", "52-54-00-00-00-01", "--boot-disk", "sda"},
		{"register", "a2", "--serial", "SN-4711", "--mac", "52:54:00:00:00:01"},
	} {
		r := np(t, state, args...)
		if r.code != 2 || !strings.Contains(r.err, "already pinned by pending registration a1") || !strings.Contains(r.err, "--replace") {
			t.Errorf("%v: exit %d, %s; want 2 naming a1", args, r.code, r.err)
		}
	}
	if got := files(t, filepath.Join(state, "registrations")); !cmp.Equal(got, []string{"a1.json"}) {
		t.Errorf("files after the refusals: %v", got)
	}

	r := np(t, state, "register", "a1", "--mac", "52:54:00:00:00:02")
	want := "node-provisioner: warning: a1 was registered already and is replaced: macs 52:54:00:00:00:01 -> 52:54:00:00:00:02; boot disk 25414A800205 -> "
	if r.code != 0 || !strings.Contains(r.err, want) {
		t.Errorf("re-register: exit %d, stderr %q; want %q", r.code, r.err, want)
	}

	r = np(t, state, "register", "b1", "--mac", "52:54:00:00:00:02", "--boot-disk", "sda", "--replace")
	if r.code != 0 || !strings.Contains(r.err, "node-provisioner: warning: mac 52:54:00:00:00:02 moved from a1 to b1; a1 pinned nothing else and was removed") {
		t.Errorf("register --replace: exit %d, stderr %q", r.code, r.err)
	}
	if got := files(t, filepath.Join(state, "registrations")); !cmp.Equal(got, []string{"b1.json"}) {
		t.Errorf("files after the move: %v", got)
	}
}

// TestListShowsSharedPins: registration files written by hand that pin
// the same MAC are shown as such by list, on both.
func TestListShowsSharedPins(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "registrations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a1", "a2"} {
		body := `{"name": "` + name + `", "macs": ["52:54:00:00:00:01"], "boot_disk": "sda"}`
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := np(t, state, "list")
	if r.code != 0 || strings.Count(r.stdout, "mac 52:54:00:00:00:01 is pinned by a1 and a2") != 2 {
		t.Errorf("list: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
}
