package answer

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseVersion(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Version
		wantErr bool
	}{
		"an 8.2 release":                         {in: "8.2", want: Version82},
		"a 9.2 release":                          {in: "9.2", want: Version92},
		"surrounding space":                      {in: " 9.0\n", want: Version90},
		"an ISO name with its respin":            {in: "8.3-1", want: Version83},
		"a future major release":                 {in: "10.0", want: 10 << 16},
		"a package version with its patch level": {in: "8.3.3", want: Version833},
		"four numbers are refused":               {in: "8.3.3.1", wantErr: true},
		"a major version alone is refused":       {in: "9", wantErr: true},
		"an empty string is refused":             {in: "", wantErr: true},
		"letters are refused":                    {in: "nine.two", wantErr: true},
		"a bad respin is refused":                {in: "8.3-x", wantErr: true},
		"a negative minor is refused":            {in: "8.-2", wantErr: true},
		"version 0.x is refused":                 {in: "0.9", wantErr: true},
		"numbers above 255 are refused":          {in: "256.1", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseVersion(tc.in)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "MAJOR.MINOR") {
					t.Errorf("ParseVersion(%q) = %s, %v, want an error saying MAJOR.MINOR", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ParseVersion(%q) = %s, %v, want %s", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestVersionMethods(t *testing.T) {
	if got := Version84.String(); got != "8.4" {
		t.Errorf("String = %q", got)
	}
	if got := Version833.String(); got != "8.3.3" || Version833.Patch() != 3 || Version833.Series() != Version83 {
		t.Errorf("8.3.3: String = %q, Patch = %d, Series = %s", got, Version833.Patch(), Version833.Series())
	}
	if got := Version(0).String(); got != "unknown" {
		t.Errorf("zero String = %q", got)
	}
	if Version82.Major() != 8 || Version92.Minor() != 2 {
		t.Errorf("Major/Minor wrong")
	}
	ordered := []Version{Version82, Version83, Version833, Version84, Version90, Version91, Version92}
	if !slices.IsSorted(ordered) {
		t.Errorf("versions do not sort in release order: %v", ordered)
	}
	for i, v := range ordered {
		for j, w := range ordered {
			if got, want := v.Compare(w), cmpInt(i, j); got != want {
				t.Errorf("%s.Compare(%s) = %d, want %d", v, w, got, want)
			}
			if v.AtLeast(w) != (i >= j) {
				t.Errorf("%s.AtLeast(%s) wrong", v, w)
			}
		}
	}
	if Version83.KebabCase() || !Version84.KebabCase() {
		t.Errorf("KebabCase must start at 8.4")
	}
	if Version(8<<16|1<<8).Supported() || !Version82.Supported() || !Version(10<<16).Supported() {
		t.Errorf("Supported must be 8.2 and later")
	}
	if DefaultVersion != MinVersion {
		t.Errorf("DefaultVersion = %s, documented as the oldest supported, %s", DefaultVersion, MinVersion)
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestKeyRulesAreConsistent(t *testing.T) {
	seen := map[string]keyRule{}
	for _, r := range keyRules {
		if _, dup := seen[r.path]; dup {
			t.Errorf("%s listed twice", r.path)
		}
		seen[r.path] = r
		if p := parentPath(r.path); p != "" {
			parent, ok := seen[p]
			if !ok {
				t.Errorf("%s is listed before its table %s, or the table is missing", r.path, p)
			} else if r.since < parent.since {
				t.Errorf("%s (%s) is older than its table %s (%s)", r.path, r.since, p, parent.since)
			}
		}
		if strings.Contains(r.path, "_") {
			t.Errorf("%s: canonical paths are kebab-case", r.path)
		}
		if r.legacy != "" && !r.alias {
			t.Errorf("%s: a legacy spelling stays an alias from 8.4", r.path)
		}
	}
}

func TestKeySpellingsByVersion(t *testing.T) {
	tests := map[string]struct {
		path string
		v    Version
		want []string
	}{
		"root_password before 8.4":               {"global.root-password", Version83, []string{"root_password"}},
		"root-password from 8.4, alias too":      {"global.root-password", Version84, []string{"root-password", "root_password"}},
		"no hashed password on 8.2":              {"global.root-password-hashed", Version82, nil},
		"webhook cert_fingerprint on 8.3":        {"post-installation-webhook.cert-fingerprint", Version83, []string{"cert_fingerprint"}},
		"first-boot cert-fingerprint on 8.3":     {"first-boot.cert-fingerprint", Version83, []string{"cert-fingerprint"}},
		"first-boot cert_fingerprint from 8.4":   {"first-boot.cert-fingerprint", Version84, []string{"cert-fingerprint", "cert_fingerprint"}},
		"reboot-mode and its alias from 8.4":     {"global.reboot-mode", Version84, []string{"reboot-mode", "reboot_mode"}},
		"arc_max before 8.4":                     {"disk-setup.zfs.arc-max", Version82, []string{"arc_max"}},
		"auth-token and its alias auth_token":    {"post-installation-webhook.auth-token", Version92, []string{"auth-token", "auth_token"}},
		"interface-name-pinning from 9.1 only":   {"network.interface-name-pinning", Version90, nil},
		"the disk-setup section is kebab-case":   {"disk-setup", Version82, []string{"disk-setup"}},
		"an unknown path is known to no version": {"global.nonsense", Version92, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, rule(tc.path).accepts(tc.v)); diff != "" {
				t.Errorf("accepts (-want +got):\n%s", diff)
			}
		})
	}
}
