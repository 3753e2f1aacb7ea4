package zones

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSpec(t *testing.T) {
	tests := map[string]struct {
		in       string
		want     Spec
		wantErr  string
		wantZone bool // the error also wraps ErrInvalidZone
	}{
		"a README spec is normalised":            {in: "foundation.cluster.control:GP1-L:3", want: Spec{Zone: "platform.foundation.cluster.control", Type: "GP1-L", Count: 3}},
		"a full path is kept":                    {in: "platform.cognition.data:GPU-3090:2", want: Spec{Zone: "platform.cognition.data", Type: "GPU-3090", Count: 2}},
		"parts are trimmed":                      {in: " cognition.data : HIGH-MEM : 3 ", want: Spec{Zone: "platform.cognition.data", Type: "HIGH-MEM", Count: 3}},
		"leading zeros in the count are decimal": {in: "x:t:010", want: Spec{Zone: "platform.x", Type: "t", Count: 10}},
		"two parts are refused":                  {in: "a:b", wantErr: `zone spec "a:b": want zone:type:count, e.g. foundation.cluster.control:GP1-L:3`},
		"one part is refused":                    {in: "a", wantErr: `zone spec "a": want zone:type:count, e.g. foundation.cluster.control:GP1-L:3`},
		"a zero count is refused":                {in: "x:GP1-L:0", wantErr: `zone spec "x:GP1-L:0": count "0" must be a positive integer`},
		"a negative count is refused":            {in: "x:GP1-L:-2", wantErr: `zone spec "x:GP1-L:-2": count "-2" must be a positive integer`},
		"a signed count is refused":              {in: "x:GP1-L:+2", wantErr: `zone spec "x:GP1-L:+2": count "+2" must be a positive integer`},
		"an empty count is refused":              {in: "x:GP1-L:", wantErr: `zone spec "x:GP1-L:": count "" must be a positive integer`},
		"an overflowing count is refused":        {in: "x:t:99999999999999999999", wantErr: `zone spec "x:t:99999999999999999999": count "99999999999999999999" must be a positive integer`},
		"an empty type is refused":               {in: "x::3", wantErr: `zone spec "x::3": type is empty; want zone:type:count`},
		"a type with a colon is refused":         {in: "x:a:b:3", wantErr: `zone spec "x:a:b:3": type "a:b" must not contain ':'; want zone:type:count`},
		"a type with a space is refused":         {in: "x:a b:3", wantErr: `zone spec "x:a b:3": type "a b" must not contain spaces`},
		"a bad zone is refused and named":        {in: "Foo.x:t:1", wantErr: `zone spec "Foo.x:t:1": zone "Foo.x": segment "Foo" must match [a-z0-9_-]+`, wantZone: true},
		"an empty zone is refused":               {in: ":t:1", wantErr: `zone spec ":t:1": zone "" is empty; want dotted segments matching [a-z0-9_-]+, e.g. platform.foundation.cluster.control`, wantZone: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseSpec(tc.in)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseSpec(%q) = %+v, want error", tc.in, got)
				}
				if !errors.Is(err, ErrInvalidSpec) {
					t.Errorf("error %v does not wrap ErrInvalidSpec", err)
				}
				if got := errors.Is(err, ErrInvalidZone); got != tc.wantZone {
					t.Errorf("errors.Is(err, ErrInvalidZone) = %v, want %v", got, tc.wantZone)
				}
				if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
					t.Errorf("error message (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseSpec(%q) (-want +got):\n%s", tc.in, diff)
			}
			back, err := ParseSpec(got.String())
			if err != nil {
				t.Fatalf("ParseSpec(%q) of String(): %v", got.String(), err)
			}
			if diff := cmp.Diff(got, back); diff != "" {
				t.Errorf("String round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSpecString(t *testing.T) {
	s := Spec{Zone: "platform.cognition.data", Type: "GPU-3090", Count: 2}
	if diff := cmp.Diff("platform.cognition.data:GPU-3090:2", s.String()); diff != "" {
		t.Errorf("String (-want +got):\n%s", diff)
	}
}
