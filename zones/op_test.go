package zones

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseOp(t *testing.T) {
	tests := map[string]struct {
		in       string
		want     Op
		wantErr  string
		wantZone bool
	}{
		"a bare zone adds":                    {in: "platform.foundation.cluster.control", want: Op{Kind: Add, Zone: "platform.foundation.cluster.control"}},
		"a short zone adds, normalised":       {in: "newsection", want: Op{Kind: Add, Zone: "platform.newsection"}},
		"a trailing dash removes":             {in: "platform.cognition.data-", want: Op{Kind: Remove, Zone: "platform.cognition.data"}},
		"a double dash removes a dash zone":   {in: "a--", want: Op{Kind: Remove, Zone: "platform.a-"}},
		"a slash replaces":                    {in: "platform.foundation.cluster.control/platform.foundation.cluster.nodes", want: Op{Kind: Replace, Zone: "platform.foundation.cluster.control", New: "platform.foundation.cluster.nodes"}},
		"a slash replaces short zones":        {in: "old/new", want: Op{Kind: Replace, Zone: "platform.old", New: "platform.new"}},
		"the slash wins over a trailing dash": {in: "a/b-", want: Op{Kind: Replace, Zone: "platform.a", New: "platform.b-"}},
		"surrounding space is trimmed":        {in: " x- ", want: Op{Kind: Remove, Zone: "platform.x"}},
		"an empty argument is refused":        {in: "", wantErr: `allocation op "" is empty; want X (add), X- (remove) or old/new (replace)`},
		"a lone dash is refused":              {in: "-", wantErr: `allocation op "-": removed zone: zone "" is empty; want dotted segments matching [a-z0-9_-]+, e.g. platform.foundation.cluster.control`, wantZone: true},
		"a bad added zone is named":           {in: "Foo", wantErr: `allocation op "Foo": zone "Foo": segment "Foo" must match [a-z0-9_-]+`, wantZone: true},
		"a bad removed zone is named":         {in: "Foo-", wantErr: `allocation op "Foo-": removed zone: zone "Foo": segment "Foo" must match [a-z0-9_-]+`, wantZone: true},
		"a bad old zone is named":             {in: "/x", wantErr: `allocation op "/x": replaced zone: zone "" is empty; want dotted segments matching [a-z0-9_-]+, e.g. platform.foundation.cluster.control`, wantZone: true},
		"a second slash is refused":           {in: "a/b/c", wantErr: `allocation op "a/b/c": new zone: zone "b/c": segment "b/c" must match [a-z0-9_-]+`, wantZone: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseOp(tc.in)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseOp(%q) = %+v, want error", tc.in, got)
				}
				if !errors.Is(err, ErrInvalidOp) {
					t.Errorf("error %v does not wrap ErrInvalidOp", err)
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
				t.Fatalf("ParseOp(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseOp(%q) (-want +got):\n%s", tc.in, diff)
			}
			back, err := ParseOp(got.String())
			if err != nil {
				t.Fatalf("ParseOp(%q) of String(): %v", got.String(), err)
			}
			if diff := cmp.Diff(got, back); diff != "" {
				t.Errorf("String round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseOps(t *testing.T) {
	t.Run("the README's combined operations parse in order", func(t *testing.T) {
		got, err := ParseOps([]string{"newsection", "oldsection-", "old/new"})
		if err != nil {
			t.Fatal(err)
		}
		want := []Op{
			{Kind: Add, Zone: "platform.newsection"},
			{Kind: Remove, Zone: "platform.oldsection"},
			{Kind: Replace, Zone: "platform.old", New: "platform.new"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ParseOps (-want +got):\n%s", diff)
		}
	})
	t.Run("no arguments give no operations", func(t *testing.T) {
		got, err := ParseOps(nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Errorf("ParseOps(nil) = %v, want none", got)
		}
	})
	t.Run("the first bad argument is named", func(t *testing.T) {
		_, err := ParseOps([]string{"ok", "Bad-", "Worse"})
		if !errors.Is(err, ErrInvalidOp) {
			t.Fatalf("error %v does not wrap ErrInvalidOp", err)
		}
		want := `allocation op "Bad-": removed zone: zone "Bad": segment "Bad" must match [a-z0-9_-]+`
		if diff := cmp.Diff(want, err.Error()); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
	})
}

func TestOpKindString(t *testing.T) {
	got := []string{Add.String(), Remove.String(), Replace.String(), OpKind(0).String()}
	want := []string{"add", "remove", "replace", "OpKind(0)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OpKind.String (-want +got):\n%s", diff)
	}
}

func TestApply(t *testing.T) {
	tests := map[string]struct {
		current     []string
		ops         []string
		want        []string
		wantChanged bool
		wantErr     error
		wantMsg     string
	}{
		"adding to an empty node": {
			ops: []string{"foundation.cluster.control"}, want: []string{"platform.foundation.cluster.control"}, wantChanged: true,
		},
		"adding keeps the list sorted": {
			current: []string{"platform.foundation.cluster.control"}, ops: []string{"platform.cognition.data"},
			want: []string{"platform.cognition.data", "platform.foundation.cluster.control"}, wantChanged: true,
		},
		"adding a zone already there is no change": {
			current: []string{"platform.a", "platform.b"}, ops: []string{"b"},
			want: []string{"platform.a", "platform.b"},
		},
		"no operations on a sorted list is no change": {
			current: []string{"platform.a", "platform.b"},
			want:    []string{"platform.a", "platform.b"},
		},
		"no operations on an unsorted list is a change (the file would be rewritten)": {
			current: []string{"platform.b", "platform.a"},
			want:    []string{"platform.a", "platform.b"}, wantChanged: true,
		},
		"duplicates in the input are dropped, a change": {
			current: []string{"platform.a", "platform.a"},
			want:    []string{"platform.a"}, wantChanged: true,
		},
		"short zones in the input are normalised, a change": {
			current: []string{"cognition.data"}, ops: []string{"platform.cognition.data"},
			want: []string{"platform.cognition.data"}, wantChanged: true,
		},
		"invalid and blank input entries: invalid kept verbatim, blank dropped": {
			current: []string{"Weird Zone", " "},
			want:    []string{"Weird Zone"}, wantChanged: true,
		},
		"removing a zone": {
			current: []string{"platform.cognition.data", "platform.foundation.cluster.control"}, ops: []string{"platform.cognition.data-"},
			want: []string{"platform.foundation.cluster.control"}, wantChanged: true,
		},
		"removing a zone given in short form in the file": {
			current: []string{"cognition.data"}, ops: []string{"platform.cognition.data-"},
			want: []string{}, wantChanged: true,
		},
		"replacing a zone": {
			current: []string{"platform.foundation.cluster.control"}, ops: []string{"platform.foundation.cluster.control/platform.foundation.cluster.nodes"},
			want: []string{"platform.foundation.cluster.nodes"}, wantChanged: true,
		},
		"replacing a zone with one already there merges them": {
			current: []string{"platform.a", "platform.b"}, ops: []string{"a/b"},
			want: []string{"platform.b"}, wantChanged: true,
		},
		"replacing a zone by itself is no change": {
			current: []string{"platform.a"}, ops: []string{"a/a"},
			want: []string{"platform.a"},
		},
		"operations apply in order": {
			current: []string{"platform.oldsection", "platform.old"}, ops: []string{"newsection", "oldsection-", "old/new", "newsection-"},
			want: []string{"platform.new"}, wantChanged: true,
		},
		"removing what an earlier operation added works": {
			ops: []string{"x", "x-"}, want: []string{},
		},
		"removing a zone the node does not have names it and what it has": {
			current: []string{"platform.b", "platform.a"}, ops: []string{"c-"},
			wantErr: ErrNotAllocated,
			wantMsg: `remove platform.c: zone "platform.c" is not allocated to the node; the node has platform.a, platform.b`,
		},
		"replacing a zone the node does not have is an error": {
			ops:     []string{"c/d"},
			wantErr: ErrNotAllocated,
			wantMsg: `replace platform.c: zone "platform.c" is not allocated to the node; the node has no zones`,
		},
		"removing twice fails on the second, listing the state at that point": {
			current: []string{"platform.a", "platform.b"}, ops: []string{"a-", "a-"},
			wantErr: ErrNotAllocated,
			wantMsg: `remove platform.a: zone "platform.a" is not allocated to the node; the node has platform.b`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ops, err := ParseOps(tc.ops)
			if err != nil {
				t.Fatal(err)
			}
			before := slices.Clone(tc.current)
			got, changed, err := Apply(tc.current, ops)
			if diff := cmp.Diff(before, tc.current); diff != "" {
				t.Errorf("Apply modified its input (-before +after):\n%s", diff)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Apply error = %v, want %v", err, tc.wantErr)
				}
				if diff := cmp.Diff(tc.wantMsg, err.Error()); diff != "" {
					t.Errorf("error message (-want +got):\n%s", diff)
				}
				if got != nil || changed {
					t.Errorf("Apply on error = %v, %v; want nil, false", got, changed)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
		})
	}
}

func TestApplyRefusesBadHandBuiltOps(t *testing.T) {
	tests := map[string]struct {
		op      Op
		wantMsg string
	}{
		"an unknown kind": {op: Op{Zone: "platform.a"}, wantMsg: `apply "platform.a": unknown op kind 0; want Add, Remove or Replace`},
		"an invalid zone": {op: Op{Kind: Add, Zone: "A"}, wantMsg: `apply add "A": zone "A": segment "A" must match [a-z0-9_-]+`},
		"an invalid new zone": {
			op:      Op{Kind: Replace, Zone: "platform.a", New: ""},
			wantMsg: `apply replace "platform.a/": new zone: zone "" is empty; want dotted segments matching [a-z0-9_-]+, e.g. platform.foundation.cluster.control`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, _, err := Apply([]string{"platform.a"}, []Op{tc.op})
			if !errors.Is(err, ErrInvalidOp) {
				t.Fatalf("Apply error = %v, want ErrInvalidOp", err)
			}
			if diff := cmp.Diff(tc.wantMsg, err.Error()); diff != "" {
				t.Errorf("error message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyNormalisesHandBuiltOps(t *testing.T) {
	got, changed, err := Apply(nil, []Op{{Kind: Add, Zone: "cognition.data"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"platform.cognition.data"}, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if !changed {
		t.Error("changed = false, want true")
	}
}
