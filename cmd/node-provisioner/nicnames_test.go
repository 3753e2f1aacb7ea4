package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRegisterPinsNICNames: --pin-nic-names names the --macs nic0, nic1…
// in order, --nic-name MAC=NAME names one (and pins NIC names by itself);
// bad ones are usage errors (exit 2) naming the flag and what is valid,
// and nothing is written.
func TestRegisterPinsNICNames(t *testing.T) {
	state := t.TempDir()
	names := func(name string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(state, "registrations", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var reg map[string]any
		json.Unmarshal(b, &reg)
		m, _ := reg["nic_names"].(map[string]any)
		return m
	}
	r := np(t, state, "register", "pve1", "--mac", "AA:BB:CC:DD:EE:01", "--mac", "aa:bb:cc:dd:ee:02", "--boot-disk", "sda", "--pin-nic-names")
	if r.code != 0 || !strings.Contains(r.stdout, "NIC names aa:bb:cc:dd:ee:01=nic0, aa:bb:cc:dd:ee:02=nic1") {
		t.Fatalf("register --pin-nic-names: %d %q %q", r.code, r.stdout, r.err)
	}
	if diff := cmp.Diff(map[string]any{"aa:bb:cc:dd:ee:01": "nic0", "aa:bb:cc:dd:ee:02": "nic1"}, names("pve1")); diff != "" {
		t.Errorf("nic_names (-want +got):\n%s", diff)
	}
	r = np(t, state, "register", "pve2", "--mac", "aa:bb:cc:dd:ee:03", "--mac", "aa:bb:cc:dd:ee:04", "--boot-disk", "sda", "--nic-name", "AA-BB-CC-DD-EE-04=lan0")
	if r.code != 0 {
		t.Fatalf("register --nic-name: %d %q", r.code, r.err)
	}
	if diff := cmp.Diff(map[string]any{"aa:bb:cc:dd:ee:04": "lan0"}, names("pve2")); diff != "" {
		t.Errorf("nic_names (-want +got):\n%s", diff)
	}
	r = np(t, state, "register", "pve4", "--mac", "aa:bb:cc:dd:ee:07", "--mac", "aa:bb:cc:dd:ee:08", "--boot-disk", "sda", "--pin-nic-names", "--nic-name", "aa:bb:cc:dd:ee:08=nic0")
	if r.code != 0 {
		t.Fatalf("register --pin-nic-names --nic-name: %d %q", r.code, r.err)
	}
	if diff := cmp.Diff(map[string]any{"aa:bb:cc:dd:ee:07": "nic1", "aa:bb:cc:dd:ee:08": "nic0"}, names("pve4")); diff != "" {
		t.Errorf("nic_names (-want +got):\n%s", diff)
	}
	bad := map[string]struct {
		args []string
		want string
	}{
		"no = in --nic-name":              {[]string{"--mac", "aa:bb:cc:dd:ee:05", "--nic-name", "lan0"}, `--nic-name "lan0": want MAC=NAME`},
		"a bad MAC in --nic-name":         {[]string{"--mac", "aa:bb:cc:dd:ee:05", "--nic-name", "xx=lan0"}, "--nic-name"},
		"a MAC it does not pin":           {[]string{"--mac", "aa:bb:cc:dd:ee:05", "--nic-name", "aa:bb:cc:dd:ee:06=lan0"}, "aa:bb:cc:dd:ee:06 is not one of its MACs"},
		"a name the installer takes not":  {[]string{"--mac", "aa:bb:cc:dd:ee:05", "--nic-name", "aa:bb:cc:dd:ee:05=lan-0"}, "want a letter, then letters, digits or _"},
		"--pin-nic-names without a --mac": {[]string{"--serial", "S1", "--pin-nic-names"}, "--pin-nic-names needs a --mac"},
	}
	for name, tc := range bad {
		r := np(t, state, append([]string{"register", "pve3", "--boot-disk", "sda"}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.err, tc.want) {
			t.Errorf("%s: exit %d %q; want 2 saying %q", name, r.code, r.err, tc.want)
		}
		if _, err := os.Stat(filepath.Join(state, "registrations", "pve3.json")); err == nil {
			t.Fatalf("%s: a registration was written", name)
		}
	}
}
