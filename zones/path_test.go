package zones

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalize(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    string
		wantErr string
	}{
		"a path without the root gets the platform prefix": {in: "foundation.cluster.control", want: "platform.foundation.cluster.control"},
		"the root alone stays":                             {in: "platform", want: "platform"},
		"a path under the root stays":                      {in: "platform.x", want: "platform.x"},
		"surrounding space is trimmed":                     {in: "  cognition.data\t", want: "platform.cognition.data"},
		"digits, dashes and underscores are allowed":       {in: "a-1.b_2", want: "platform.a-1.b_2"},
		"a root-like first segment still gets the prefix":  {in: "platforms.x", want: "platform.platforms.x"},
		"upper case is refused and named":                  {in: "Foundation.x", wantErr: `zone "Foundation.x": segment "Foundation" must match [a-z0-9_-]+`},
		"an empty path is refused":                         {in: "  ", wantErr: `zone "  " is empty; want dotted segments matching [a-z0-9_-]+, e.g. platform.foundation.cluster.control`},
		"an empty segment is refused":                      {in: "a..b", wantErr: `zone "a..b": segment 2 is empty; want dotted segments matching [a-z0-9_-]+`},
		"a trailing dot is refused":                        {in: "platform.", wantErr: `zone "platform.": segment 2 is empty; want dotted segments matching [a-z0-9_-]+`},
		"a slash is refused":                               {in: "a/b", wantErr: `zone "a/b": segment "a/b" must match [a-z0-9_-]+`},
		"an inner space is refused":                        {in: "a b.c", wantErr: `zone "a b.c": segment "a b" must match [a-z0-9_-]+`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Normalize(tc.in)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("Normalize(%q) = %q, want error %q", tc.in, got, tc.wantErr)
				}
				if !errors.Is(err, ErrInvalidZone) {
					t.Errorf("error %v does not wrap ErrInvalidZone", err)
				}
				if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
					t.Errorf("error message (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Normalize(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Normalize(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestContains(t *testing.T) {
	tests := map[string]struct {
		zone, nodeZone string
		want           bool
	}{
		"a zone contains itself":                   {"platform.foundation", "platform.foundation", true},
		"a zone contains a zone below it":          {"platform.foundation", "platform.foundation.cluster.control", true},
		"the root contains everything under it":    {"platform", "platform.cognition.data", true},
		"a sibling with a common prefix is not in": {"platform.foundation", "platform.foundationx", false},
		"a parent is not in its child":             {"platform.foundation.cluster", "platform.foundation", false},
		"an unrelated zone is not in":              {"platform.cognition", "platform.foundation.cluster", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Contains(tc.zone, tc.nodeZone); got != tc.want {
				t.Errorf("Contains(%q, %q) = %v, want %v", tc.zone, tc.nodeZone, got, tc.want)
			}
		})
	}
}
