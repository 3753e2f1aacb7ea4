package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretCommands: a site secret is set from a file (never an
// argument), listed by name only, refused with exit 2 for a bad name or
// value before anything is kept, and removed.
func TestSecretCommands(t *testing.T) {
	state := t.TempDir()
	value := writeFile(t, "bmc.txt", "rack1-Pa55\n")
	if r := np(t, state, "secret", "set", "bmc-rack1", "--from-file", value); r.code != 0 || !strings.Contains(r.stdout, "Site secret bmc-rack1 set.") {
		t.Fatalf("secret set: %d %q %q", r.code, r.stdout, r.err)
	}
	if b, err := os.ReadFile(filepath.Join(state, "site-secrets", "bmc-rack1.secret")); err != nil || string(b) != "rack1-Pa55\n" {
		t.Errorf("kept %q, %v", b, err)
	}
	for what, args := range map[string][]string{
		"a bad name":         {"secret", "set", "Rack_1", "--from-file", value},
		"an empty value":     {"secret", "set", "empty", "--from-file", writeFile(t, "empty.txt", "\n")},
		"two lines":          {"secret", "set", "two", "--from-file", writeFile(t, "two.txt", "two-Pa55\nlines-Pa55\n")},
		"a missing file":     {"secret", "set", "missing", "--from-file", filepath.Join(state, "none.txt")},
		"a bad name removed": {"secret", "remove", "../x"},
	} {
		if r := np(t, state, args...); r.code != 2 || strings.Contains(r.err, "Pa55") || r.err == "" {
			t.Errorf("%s: %d %q; want exit 2 with a message that quotes no value", what, r.code, r.err)
		}
	}
	r := np(t, state, "secret", "list")
	if r.code != 0 || r.stdout != "bmc-rack1\n" {
		t.Errorf("secret list: %d %q %q; want the one name", r.code, r.stdout, r.err)
	}
	if r := np(t, state, "secret", "list", "-o", "json"); r.code != 0 || strings.Contains(r.stdout, "Pa55") || !strings.Contains(r.stdout, `"bmc-rack1"`) {
		t.Errorf("secret list -o json: %d %q", r.code, r.stdout)
	}
	if r := np(t, state, "secret", "remove", "bmc-rack1"); r.code != 0 {
		t.Errorf("secret remove: %d %q", r.code, r.err)
	}
	if r := np(t, state, "secret", "remove", "bmc-rack1"); r.code != 1 || !strings.Contains(r.err, "no such site secret") {
		t.Errorf("secret remove of none: %d %q; want exit 1 saying none is kept", r.code, r.err)
	}
	if r := np(t, state, "secret", "list"); r.code != 0 || r.stdout != "No site secrets.\n" {
		t.Errorf("secret list of none: %d %q", r.code, r.stdout)
	}
}
