package hostname

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompareSortsNaturally(t *testing.T) {
	got := []string{"tappaas10", "tappaas3", "tappaas1", "pve01", "pve1", "a", "tappaas2b", "tappaas2a", "b10x", "b9x"}
	slices.SortFunc(got, Compare)
	want := []string{"a", "b9x", "b10x", "pve1", "pve01", "tappaas1", "tappaas2a", "tappaas2b", "tappaas3", "tappaas10"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("natural order (-want +got):\n%s", diff)
	}
}

func TestCheckDomain(t *testing.T) {
	tests := map[string]struct {
		domain string
		want   string // "" for valid
	}{
		"a domain of two labels is valid": {"example.com", ""},
		"one label is valid":              {"internal", ""},
		"a digit-only label is valid":     {"1.example.com", ""},
		"a space is refused":              {"exa mple.com", `label 1 "exa mple": character ' ' is not a-z, 0-9 or '-'`},
		"two dots are refused":            {"example..com", `label 2 "": empty`},
		"a trailing dot is refused":       {"example.com.", `label 3 "": empty`},
		"a non-ASCII letter is refused":   {"bücher.example", `label 1 "bücher": character 'ü'`},
		"upper case is refused":           {"Example.com", `upper-case 'E'`},
		"a leading '-' is refused":        {"-a.example", `starts or ends with '-'`},
		"a label over 63 is refused":      {strings.Repeat("a", 64) + ".com", "64 characters, over 63"},
		"a domain over 253 is refused":    {strings.Repeat("a.", 152), "304 characters, over 253"},
		"an empty domain is refused":      {"", "empty"},
		"an underscore is refused":        {"my_site.example", `character '_'`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := CheckDomain(tc.domain)
			if tc.want == "" {
				if err != nil {
					t.Errorf("CheckDomain(%q) = %v, want nil", tc.domain, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckDomain(%q) = %v, want it to say %q", tc.domain, err, tc.want)
			}
		})
	}
}
