package zones

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// readmePaths are the zones of testdata/topology.yaml, the plasmactl-zone
// README example.
var readmePaths = []string{
	"platform",
	"platform.cognition",
	"platform.cognition.data",
	"platform.cognition.knowledge",
	"platform.foundation",
	"platform.foundation.cluster",
	"platform.foundation.cluster.control",
	"platform.foundation.cluster.nodes",
	"platform.foundation.network",
	"platform.foundation.network.ingress",
	"platform.foundation.storage",
	"platform.foundation.storage.kv",
	"platform.interaction",
	"platform.interaction.management",
	"platform.interaction.observability",
}

func TestLoadTopology(t *testing.T) {
	t.Run("the README example gives every zone and prefix", func(t *testing.T) {
		top, err := LoadTopology(filepath.Join("testdata", topologyFile))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(readmePaths, top.Paths()); diff != "" {
			t.Errorf("Paths (-want +got):\n%s", diff)
		}
	})
	t.Run("a missing file is fs.ErrNotExist", func(t *testing.T) {
		top, err := LoadTopology(filepath.Join(t.TempDir(), topologyFile))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("LoadTopology error = %v, want fs.ErrNotExist", err)
		}
		if top != nil {
			t.Errorf("LoadTopology = %v, want nil", top)
		}
	})
	t.Run("a bad file names the file and wraps ErrInvalidTopology", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), topologyFile)
		if err := os.WriteFile(path, []byte("platform:\n  - Bad\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadTopology(path)
		if !errors.Is(err, ErrInvalidTopology) {
			t.Fatalf("LoadTopology error = %v, want ErrInvalidTopology", err)
		}
		want := "load topology " + path + `: parse topology: line 2: zone name "Bad" must be one segment matching [a-z0-9_-]+`
		if diff := cmp.Diff(want, err.Error()); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
	})
	t.Run("an oversized file is refused", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), topologyFile)
		data := "platform:\n" + strings.Repeat("# padding\n", maxTopologySize/10+1)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadTopology(path)
		if !errors.Is(err, ErrInvalidTopology) || !strings.Contains(err.Error(), "limit") {
			t.Fatalf("LoadTopology error = %v, want ErrInvalidTopology naming the limit", err)
		}
	})
}

func TestParseTopology(t *testing.T) {
	tests := map[string]struct {
		yaml    string
		want    []string
		wantErr string
	}{
		"an empty document has no zones":       {yaml: "", want: []string{}},
		"a comment-only document has no zones": {yaml: "# nothing yet\n", want: []string{}},
		"a null root has no zones":             {yaml: "~\n", want: []string{}},
		"a layer may be a map": {
			yaml: "platform:\n  foundation:\n    cluster:\n      control: ~\n",
			want: []string{"platform", "platform.foundation", "platform.foundation.cluster", "platform.foundation.cluster.control"},
		},
		"a layer may be null": {
			yaml: "platform:\n  foundation:\n  cognition: ~\n",
			want: []string{"platform", "platform.cognition", "platform.foundation"},
		},
		"a layer may be a lone scalar": {
			yaml: "platform:\n  interaction: observability\n",
			want: []string{"platform", "platform.interaction", "platform.interaction.observability"},
		},
		"a multi-key map in a sequence is accepted": {
			yaml: "platform:\n  foundation:\n    - cluster: [control]\n      storage: [kv]\n",
			want: []string{"platform", "platform.foundation", "platform.foundation.cluster", "platform.foundation.cluster.control", "platform.foundation.storage", "platform.foundation.storage.kv"},
		},
		"flow style is accepted": {
			yaml: "{platform: {cognition: [data, {models: [llm]}]}}",
			want: []string{"platform", "platform.cognition", "platform.cognition.data", "platform.cognition.models", "platform.cognition.models.llm"},
		},
		"a root other than platform lies under platform": {
			yaml: "foundation:\n  - cluster\n",
			want: []string{"platform", "platform.foundation", "platform.foundation.cluster"},
		},
		"numeric-looking names are segments": {
			yaml: "platform:\n  - 1\n  - true\n",
			want: []string{"platform", "platform.1", "platform.true"},
		},
		"duplicates merge": {
			yaml: "platform:\n  a: [x]\n  b: [x, x]\n",
			want: []string{"platform", "platform.a", "platform.a.x", "platform.b", "platform.b.x"},
		},
		"only the first document is read": {
			yaml: "platform: [a]\n---\nplatform: [b]\n",
			want: []string{"platform", "platform.a"},
		},
		"an upper-case name is refused with its line": {
			yaml:    "platform:\n  foundation:\n    - Cluster\n",
			wantErr: `parse topology: line 3: zone name "Cluster" must be one segment matching [a-z0-9_-]+`,
		},
		"a dotted name is refused": {
			yaml:    "platform:\n  - cluster.control\n",
			wantErr: `parse topology: line 2: zone name "cluster.control" must be one segment matching [a-z0-9_-]+`,
		},
		"an empty string name is refused": {
			yaml:    "platform:\n  - \"\"\n",
			wantErr: `parse topology: line 2: zone name "" must be one segment matching [a-z0-9_-]+`,
		},
		"a long bad name is clipped in the message": {
			yaml:    "platform:\n  - " + strings.Repeat("X", 100) + "\n",
			wantErr: `parse topology: line 2: zone name "` + strings.Repeat("X", 64) + `..." must be one segment matching [a-z0-9_-]+`,
		},
		"a complex key is refused": {
			yaml:    "platform:\n  ? [a, b]\n  : x\n",
			wantErr: `parse topology: line 2: a zone name must be a plain scalar such as cluster`,
		},
		"an alias is refused with its line": {
			yaml:    "platform:\n  a: &x [k]\n  b: *x\n",
			wantErr: `parse topology: line 3: alias *x is not allowed in topology.yaml (aliases are refused to keep parsing bounded)`,
		},
		"a merge key is refused": {
			yaml:    "platform:\n  a: &x {k: ~}\n  b:\n    <<: *x\n",
			wantErr: `parse topology: line 4: zone name "<<" must be one segment matching [a-z0-9_-]+`,
		},
		"a YAML syntax error gives the parser's line": {
			yaml:    "platform:\n\t- a\n",
			wantErr: "parse topology: yaml: line 2: found character that cannot start any token",
		},
		"a path deeper than the limit is refused": {
			yaml:    strings.Repeat("{a: ", maxDepth) + "~" + strings.Repeat("}", maxDepth),
			wantErr: `parse topology: line 1: zone name "a" is at depth 65, deeper than the 64-segment limit`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			top, err := ParseTopology([]byte(tc.yaml))
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseTopology = %v, want error %q", top.Paths(), tc.wantErr)
				}
				if !errors.Is(err, ErrInvalidTopology) {
					t.Errorf("error %v does not wrap ErrInvalidTopology", err)
				}
				if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
					t.Errorf("error message (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTopology: %v", err)
			}
			if diff := cmp.Diff(tc.want, top.Paths()); diff != "" {
				t.Errorf("Paths (-want +got):\n%s", diff)
			}
		})
	}
}

// billionLaughs is the classic alias-expansion bomb: nine levels of ten
// aliases each would expand to 10^9 leaves.
const billionLaughs = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`

func TestParseTopologyRefusesAliasBombFast(t *testing.T) {
	start := time.Now()
	_, err := ParseTopology([]byte(billionLaughs))
	elapsed := time.Since(start)
	if !errors.Is(err, ErrInvalidTopology) {
		t.Fatalf("ParseTopology error = %v, want ErrInvalidTopology", err)
	}
	want := `parse topology: line 2: alias *a is not allowed in topology.yaml (aliases are refused to keep parsing bounded)`
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if elapsed > time.Second {
		t.Errorf("refusing the alias bomb took %v, want well under a second", elapsed)
	}
}

func TestTopologyCheck(t *testing.T) {
	top, err := LoadTopology(filepath.Join("testdata", topologyFile))
	if err != nil {
		t.Fatal(err)
	}
	empty, err := ParseTopology(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		top     *Topology
		zone    string
		wantErr error
		wantMsg string
	}{
		"a leaf is known":                    {top: top, zone: "platform.foundation.cluster.control"},
		"a short form is normalised first":   {top: top, zone: "foundation.cluster.control"},
		"a prefix is a zone":                 {top: top, zone: "platform.foundation.cluster"},
		"the root is a zone":                 {top: top, zone: "platform"},
		"a nil topology accepts valid zones": {top: nil, zone: "anything.at.all"},
		"a nil topology still refuses invalid zones": {
			top: nil, zone: "Bad", wantErr: ErrInvalidZone,
			wantMsg: `zone "Bad": segment "Bad" must match [a-z0-9_-]+`,
		},
		"a typo lists the nearest zones, the intended one first": {
			top: top, zone: "platform.foundation.clster.control", wantErr: ErrUnknownZone,
			wantMsg: `zone "platform.foundation.clster.control" is not in topology.yaml; nearest: platform.foundation.cluster.control, platform.foundation.cluster.nodes, platform.foundation.cluster, platform.foundation.network, platform.foundation.storage`,
		},
		"an unknown child lists its siblings and parent": {
			top: top, zone: "cognition.dat", wantErr: ErrUnknownZone,
			wantMsg: `zone "platform.cognition.dat" is not in topology.yaml; nearest: platform.cognition.data, platform.cognition, platform.cognition.knowledge, platform.foundation, platform.foundation.cluster`,
		},
		"an empty topology says it defines nothing": {
			top: empty, zone: "platform.x", wantErr: ErrUnknownZone,
			wantMsg: `zone "platform.x" is not in topology.yaml; it defines no zones`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.top.Check(tc.zone)
			if got := tc.top.Has(tc.zone); got != (err == nil) {
				t.Errorf("Has(%q) = %v but Check gave %v", tc.zone, got, err)
			}
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Check(%q): %v", tc.zone, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Check(%q) = %v, want %v", tc.zone, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantMsg, err.Error()); diff != "" {
				t.Errorf("error message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTopologyPathsIsACopy(t *testing.T) {
	top, err := ParseTopology([]byte("platform: [a]"))
	if err != nil {
		t.Fatal(err)
	}
	p := top.Paths()
	p[0] = "changed"
	if diff := cmp.Diff([]string{"platform", "platform.a"}, top.Paths()); diff != "" {
		t.Errorf("Paths after modifying a returned slice (-want +got):\n%s", diff)
	}
	var nilTop *Topology
	if got := nilTop.Paths(); got != nil {
		t.Errorf("nil Topology Paths = %v, want nil", got)
	}
}

func TestLevenshtein(t *testing.T) {
	tests := map[string]struct {
		a, b string
		want int
	}{
		"equal strings":     {"abc", "abc", 0},
		"one insertion":     {"clster", "cluster", 1},
		"from empty":        {"", "abc", 3},
		"to empty":          {"abc", "", 3},
		"kitten to sitting": {"kitten", "sitting", 3},
		"one substitution":  {"data", "dota", 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := levenshtein(tc.a, tc.b); got != tc.want {
				t.Errorf("levenshtein(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
		})
	}
}
