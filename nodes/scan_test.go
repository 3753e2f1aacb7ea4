package nodes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMalformedLinesNameTheOffendingLine: yaml.v3 counts a parser
// error's line from 0; the message names the line as an editor does.
func TestMalformedLinesNameTheOffendingLine(t *testing.T) {
	tests := map[string]struct {
		data string
		want string
	}{
		"an unclosed flow sequence": {"hostname: x\nzones: [a\nnetwork:\n  public_ip: 1.2.3.4\n", "line 2: did not find expected ',' or ']'"},
		"an unclosed last line":     {"hostname: x\nzones: a\nnetwork: [\n", "line 3: did not find expected node content"},
		"a scanner error as it was": {"hostname: x\nzones: a: b\n", "line 2: mapping values are not allowed in this context"},
		"a type error as it was":    {"hostname: x\nzones: {a: 1}\n", "line 2: cannot unmarshal !!map into []string"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := parseDocument("n.yaml", []byte(tc.data), &Node{})
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrMalformed and %q", err, tc.want)
			}
		})
	}
}

func TestScanNodesKeepsTheReadableOnes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := Open(dir, Options{})
	if err := s.CreatePlatform(ctx, &Platform{Name: "demo"}); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"a", "c"} {
		if err := s.CreateNode(ctx, &Node{Hostname: h, Platform: "demo"}); err != nil {
			t.Fatal(err)
		}
	}
	bad := filepath.Join(dir, "platforms/demo/nodes/b.yaml")
	if err := os.WriteFile(bad, []byte("hostname: b\nzones: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ns, broken, err := s.ScanNodes(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range ns {
		names = append(names, n.Hostname)
	}
	if diff := cmp.Diff([]string{"a", "c"}, names); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if len(broken) != 1 || broken[0].File != bad || !errors.Is(broken[0].Err, ErrMalformed) {
		t.Errorf("broken = %+v, want %s", broken, bad)
	}
	if _, err := s.Nodes(ctx, "demo"); !errors.Is(err, ErrMalformed) {
		t.Errorf("Nodes() = %v, still strict: want ErrMalformed", err)
	}
	if n, err := s.FindNode(ctx, "c"); err != nil || n.Hostname != "c" {
		t.Errorf("FindNode(c) = %v, %v; want c despite b.yaml", n, err)
	}
	if _, err := s.FindNode(ctx, "zz"); !errors.Is(err, ErrNodeNotFound) || !strings.Contains(err.Error(), "b.yaml") {
		t.Errorf("FindNode(zz) = %v; want not found naming b.yaml", err)
	}
}
