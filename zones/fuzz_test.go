package zones

import (
	"slices"
	"strings"
	"testing"
)

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{
		"foundation.cluster.control:GP1-L:3", "cognition.data:GPU-3090:2", "a:b", "x:GP1-L:0",
		"x::1", ":t:1", "x:a:b:3", " x : t : 007 ", "Foo:t:1", "x:t:99999999999999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseSpec(s)
		if err != nil {
			return
		}
		if spec.Count <= 0 || spec.Type == "" || strings.Contains(spec.Type, ":") {
			t.Fatalf("ParseSpec(%q) = %+v: count must be positive and type non-empty without ':'", s, spec)
		}
		if n, err := Normalize(spec.Zone); err != nil || n != spec.Zone {
			t.Fatalf("ParseSpec(%q) zone %q is not normalised (%q, %v)", s, spec.Zone, n, err)
		}
		back, err := ParseSpec(spec.String())
		if err != nil {
			t.Fatalf("ParseSpec(String() = %q): %v", spec.String(), err)
		}
		if back != spec {
			t.Fatalf("round trip of %q: %+v != %+v", s, back, spec)
		}
	})
}

// FuzzParseOps takes space-separated operations and comma-separated current
// zones.
func FuzzParseOps(f *testing.F) {
	f.Add("newsection oldsection- old/new", "platform.oldsection,platform.old")
	f.Add("a a- a", "")
	f.Add("x/y y/x", "x")
	f.Add("- / a/ /b", "Weird, ,platform.a")
	f.Add("a--", "platform.a-")
	f.Fuzz(func(t *testing.T, args, current string) {
		ops, err := ParseOps(strings.Fields(args))
		if err != nil {
			return
		}
		for _, op := range ops {
			back, err := ParseOp(op.String())
			if err != nil || back != op {
				t.Fatalf("round trip of %+v: %+v, %v", op, back, err)
			}
		}
		var cur []string
		if current != "" {
			cur = strings.Split(current, ",")
		}
		before := slices.Clone(cur)
		result, changed, err := Apply(cur, ops)
		if !slices.Equal(before, cur) {
			t.Fatalf("Apply modified current: %q -> %q", before, cur)
		}
		if err != nil {
			return
		}
		if !slices.IsSorted(result) || len(slices.Compact(slices.Clone(result))) != len(result) {
			t.Fatalf("Apply result %q is not sorted and unique", result)
		}
		if changed != !slices.Equal(result, cur) {
			t.Fatalf("changed = %v for %q -> %q", changed, cur, result)
		}
		again, changed2, err := Apply(result, nil)
		if err != nil || changed2 || !slices.Equal(again, result) {
			t.Fatalf("Apply(result, nil) = %q, %v, %v; want the same list unchanged", again, changed2, err)
		}
	})
}

func FuzzParseTopology(f *testing.F) {
	f.Add([]byte("platform:\n  foundation:\n    - cluster:\n      - control\n      - nodes\n  interaction:\n    - observability\n"))
	f.Add([]byte("{platform: {a: [b, {c: [d]}], e: ~, f: g}}"))
	f.Add([]byte("foundation: [x]\n---\nother: [y]\n"))
	f.Add([]byte("platform:\n  a: &x [k]\n  b: *x\n"))
	f.Add([]byte(billionLaughs))
	f.Add([]byte("platform:\n  ? [a]\n  : b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		top, err := ParseTopology(data)
		if err != nil {
			return
		}
		paths := top.Paths()
		if !slices.IsSorted(paths) {
			t.Fatalf("Paths not sorted: %q", paths)
		}
		for i, p := range paths {
			if i > 0 && paths[i-1] == p {
				t.Fatalf("duplicate path %q", p)
			}
			if n, err := Normalize(p); err != nil || n != p {
				t.Fatalf("path %q is not a normalised zone (%q, %v)", p, n, err)
			}
			if err := top.Check(p); err != nil {
				t.Fatalf("Check(%q) of a listed path: %v", p, err)
			}
			if i := strings.LastIndexByte(p, '.'); i >= 0 && !top.Has(p[:i]) {
				t.Fatalf("prefix %q of %q is missing", p[:i], p)
			}
		}
	})
}
