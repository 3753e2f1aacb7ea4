package answer

import (
	"flag"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// CheckGolden compares got with the golden file at path, after writing
// got there under -update.
func CheckGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("Render differs from %s (-want +got):\n%s", path, diff)
	}
}

// Timezones returns the time zone names the installer accepts for
// global.timezone, sorted: tzdata's zone.tab zones and "UTC". The slice
// is a copy.
func Timezones() []string { return slices.Clone(timezoneList()) }

// Series returns the release without its patch level: 8.3 for 8.3.3.
func (v Version) Series() Version { return v &^ 0xff }

// Compare returns -1, 0 or +1 as v is older than, the same as, or newer
// than w.
func (v Version) Compare(w Version) int {
	switch {
	case v < w:
		return -1
	case v > w:
		return 1
	}
	return 0
}

// rule returns the rule for a canonical path; a path missing from the
// schema is known to no version.
func rule(path string) keyRule {
	for _, r := range keyRules {
		if r.path == path {
			return r
		}
	}
	return keyRule{path: path, since: LatestVersion + 1}
}
