package nodes

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite golden files")

// project makes a project folder with the given files (path -> content).
func project(t testing.TB, files map[string]string) *Store {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Open(dir, Options{})
}

func read(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(read(t, path), got); diff != "" {
		t.Errorf("%s mismatch (-want +got; refresh with -update):\n%s", name, diff)
	}
}

var nodeOpts = cmpopts.IgnoreUnexported(Node{})

func TestAnchorFilesLoadUnchanged(t *testing.T) {
	s := project(t, map[string]string{
		"platforms/ovhp/platform.yaml":                 read(t, "testdata/anchor-platform.yaml"),
		"platforms/ovhp/nodes/ns1.example.net.yaml":    read(t, "testdata/anchor-node.yaml"),
		"platforms/ovhp/nodes/node001.yaml":            read(t, "testdata/anchor-readme-node.yaml"),
		"platforms/ovhp/nodes/nameless.yaml":           "zones: [platform.cognition.data]\nnetwork:\n  private_ip: 192.168.0.9\n",
		"platforms/ovhp/nodes/.tmp-node003.yaml-12345": "garbage: [",
		"platforms/ovhp/nodes/README.md":               "not a node",
	})
	ctx := context.Background()
	got, err := s.Nodes(ctx, "ovhp")
	if err != nil {
		t.Fatal(err)
	}
	want := []*Node{
		{Hostname: "nameless", Platform: "ovhp", Zones: []string{"platform.cognition.data"}, Network: Network{PrivateIP: "192.168.0.9"}},
		{
			Hostname: "node001", Platform: "ovhp",
			Zones:            []string{"platform.foundation.cluster.control", "platform.foundation.network.ingress"},
			Network:          Network{PublicIP: "51.159.x.x", PrivateIP: "192.168.1.10"},
			ProviderMetadata: ProviderMetadata{ServerID: "12345"},
			Labels:           map[string]string{"foundation": "true"},
		},
		{
			Hostname: "ns1.example.net", Platform: "ovhp",
			Zones:            []string{"platform.foundation.cluster.control"},
			Network:          Network{PublicIP: "1.2.3.4", PrivateIP: "192.168.0.1"},
			ProviderMetadata: ProviderMetadata{Provider: "ovh", ServerID: "ns1.example.net", Zone: "bhs"},
		},
	}
	if diff := cmp.Diff(want, got, nodeOpts); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	p, err := s.Platform(ctx, "ovhp")
	if err != nil {
		t.Fatal(err)
	}
	wantP := &Platform{
		Name:           "example-plat",
		Infrastructure: Infrastructure{MetalProvider: "ovh", API: API{ClientID: "cid", ClientSecret: "csec"}},
		Pools:          map[string]Pool{"control": {Zones: []string{"platform.foundation.cluster.control"}, Machine: "advance-1", Count: 1}},
	}
	if diff := cmp.Diff(wantP, p, cmpopts.IgnoreUnexported(Platform{})); diff != "" {
		t.Errorf("platform (-want +got):\n%s", diff)
	}
}

func TestUpdateNodeKeepsWhatAPersonWrote(t *testing.T) {
	tests := map[string]struct {
		edit   func(*Node)
		golden string
	}{
		"adding a zone keeps comments, order and unknown fields": {
			edit: func(n *Node) {
				n.Zones = []string{"platform.cognition.data", "platform.foundation.cluster.control", "platform.interaction.observability"}
			},
			golden: "commented-node.add-zone.golden",
		},
		"removing the labels drops only that key": {
			edit:   func(n *Node) { n.Labels = nil },
			golden: "commented-node.no-labels.golden",
		},
		"setting a new field appends it": {
			edit: func(n *Node) {
				n.Machine = "GP1-L"
				n.K8sLabels = map[string]string{"platform.foundation.cluster.control": "true"}
			},
			golden: "commented-node.new-fields.golden",
		},
		"changing a commented value keeps its comment": {
			edit:   func(n *Node) { n.Network.PrivateIP = "192.168.0.20" },
			golden: "commented-node.new-ip.golden",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := project(t, map[string]string{
				"platforms/p/platform.yaml":      "name: p\ninfrastructure:\n  metal_provider: manual\n",
				"platforms/p/nodes/node002.yaml": read(t, "testdata/commented-node.yaml"),
			})
			_, err := s.UpdateNode(context.Background(), "p", "node002", func(n *Node) error { tc.edit(n); return nil })
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, read(t, s.NodePath("p", "node002")))
		})
	}
}

func TestUpdateNodeWritesNothingOnError(t *testing.T) {
	s := project(t, map[string]string{
		"platforms/p/platform.yaml":      "name: p\ninfrastructure:\n  metal_provider: manual\n",
		"platforms/p/nodes/node002.yaml": read(t, "testdata/commented-node.yaml"),
	})
	before := read(t, s.NodePath("p", "node002"))
	boom := errors.New("boom")
	_, err := s.UpdateNode(context.Background(), "p", "node002", func(n *Node) error { n.Zones = nil; return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if got := read(t, s.NodePath("p", "node002")); got != before {
		t.Errorf("file changed:\n%s", cmp.Diff(before, got))
	}
	// An edit that changes nothing does not rewrite the file either.
	if _, err := s.UpdateNode(context.Background(), "p", "node002", func(*Node) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s.NodePath("p", "node002")); got != before {
		t.Errorf("no-op edit changed the file:\n%s", cmp.Diff(before, got))
	}
}

func TestMalformedFilesAreErrorsWithFileAndLine(t *testing.T) {
	tests := map[string]struct {
		content string
		want    []string
	}{
		"syntax error names the line": {
			content: "hostname: a\nzones: [platform.x\nnetwork: {}\n",
			want:    []string{"platforms/p/nodes/a.yaml", "line"},
		},
		"wrong type names the line and field": {
			content: "hostname: a\nzones:\n  nested: map\n",
			want:    []string{"platforms/p/nodes/a.yaml", "line 3"},
		},
		"a list instead of a mapping": {
			content: "- a\n- b\n",
			want:    []string{"platforms/p/nodes/a.yaml", "line 1", "want a mapping"},
		},
		"two documents": {
			content: "hostname: a\n---\nhostname: b\n",
			want:    []string{"second YAML document"},
		},
		"an alias bomb": {
			content: bomb(),
			want:    []string{"aliases expand to more than"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := project(t, map[string]string{
				"platforms/p/platform.yaml": "name: p\ninfrastructure:\n  metal_provider: manual\n",
				"platforms/p/nodes/a.yaml":  tc.content,
				"platforms/p/nodes/ok.yaml": "hostname: ok\n",
			})
			_, err := s.Nodes(context.Background(), "p")
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// bomb is a billion-laughs document: 9 levels of 9 aliases each.
func bomb() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := range 9 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("hostname: a\n")
	return b.String()
}

func TestCreateAndFind(t *testing.T) {
	ctx := context.Background()
	s := project(t, nil)
	for _, p := range []string{"alpha", "beta"} {
		if err := s.CreatePlatform(ctx, &Platform{Name: p, Infrastructure: Infrastructure{MetalProvider: "manual"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreatePlatform(ctx, &Platform{Name: "alpha"}); !errors.Is(err, ErrExists) {
		t.Errorf("second CreatePlatform: err = %v, want ErrExists", err)
	}
	for _, n := range []*Node{{Hostname: "web1", Platform: "alpha"}, {Hostname: "db1", Platform: "alpha"}, {Hostname: "db1", Platform: "beta"}} {
		if err := s.CreateNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateNode(ctx, &Node{Hostname: "web1", Platform: "alpha"}); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate CreateNode: err = %v, want ErrExists", err)
	}
	n, err := s.FindNode(ctx, "web1")
	if err != nil || n.Platform != "alpha" {
		t.Errorf("FindNode(web1) = %v, %v; want web1@alpha", n, err)
	}
	if _, err := s.FindNode(ctx, "db1"); !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "alpha, beta") {
		t.Errorf("FindNode(db1): err = %v, want ErrAmbiguous listing alpha, beta", err)
	}
	if _, err := s.FindNode(ctx, "nope"); !errors.Is(err, ErrNodeNotFound) {
		t.Errorf("FindNode(nope): err = %v, want ErrNodeNotFound", err)
	}
	if _, err := s.Nodes(ctx, "gamma"); !errors.Is(err, ErrPlatformNotFound) || !strings.Contains(err.Error(), "alpha, beta") {
		t.Errorf("Nodes(gamma): err = %v, want ErrPlatformNotFound listing the known ones", err)
	}
	plats, err := s.Platforms(ctx)
	if diff := cmp.Diff([]string{"alpha", "beta"}, plats); err != nil || diff != "" {
		t.Errorf("Platforms: %v %s", err, diff)
	}
	golden(t, "created-node.golden", read(t, s.NodePath("alpha", "web1")))
	golden(t, "created-platform.golden", read(t, filepath.Join(s.platformDir("alpha"), platformFile)))
}

func TestValidateHostname(t *testing.T) {
	tests := map[string]bool{
		"node001": true, "a": true, "a-b": true, strings.Repeat("a", 63): true,
		"": false, "-a": false, "a-": false, "A": false, "a_b": false, "a.b": false,
		strings.Repeat("a", 64): false, "a b": false, "../x": false,
	}
	for h, ok := range tests {
		err := ValidateHostname(h)
		if (err == nil) != ok {
			t.Errorf("ValidateHostname(%q) = %v, want ok=%v", h, err, ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateHostname(%q) error does not wrap ErrInvalidName", h)
		}
	}
}

func TestLockIsExclusive(t *testing.T) {
	ctx := context.Background()
	s := project(t, map[string]string{"platforms/p/platform.yaml": "name: p\n", "platforms/p/nodes/.tmp-x.yaml-1": "x"})
	l, err := s.Lock(ctx, "p", "test holder", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.platformDir("p"), "nodes", ".tmp-x.yaml-1")); !os.IsNotExist(err) {
		t.Errorf("leftover temp file not cleaned: %v", err)
	}
	_, err = s.Lock(ctx, "p", "second", false)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "test holder") {
		t.Errorf("second Lock: err = %v, want ErrLocked naming the holder", err)
	}
	l.Unlock()
	l2, err := s.Lock(ctx, "p", "third", false)
	if err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	l2.Unlock()
}

func BenchmarkList10000Nodes(b *testing.B) {
	files := map[string]string{"platforms/p/platform.yaml": "name: p\n"}
	for i := range 10000 {
		files[fmt.Sprintf("platforms/p/nodes/node%05d.yaml", i)] = fmt.Sprintf(
			"hostname: node%05d\nzones:\n  - platform.foundation.cluster.control\nnetwork:\n  public_ip: 51.159.%d.%d\n  private_ip: 192.168.%d.%d\nprovider_metadata:\n  server_id: \"%d\"\nlabels:\n  foundation: \"true\"\n",
			i, i/250, i%250+1, i/250, i%250+1, i)
	}
	s := project(b, files)
	b.ResetTimer()
	for b.Loop() {
		ns, err := s.Nodes(context.Background(), "p")
		if err != nil || len(ns) != 10000 {
			b.Fatal(len(ns), err)
		}
	}
}

func TestRewriteKeepsTheFileMode(t *testing.T) {
	s := project(t, map[string]string{"platforms/p/platform.yaml": "name: p\ninfrastructure:\n  metal_provider: hetzner\n  api:\n    token: t\n"})
	path := filepath.Join(s.platformDir("p"), platformFile)
	os.Chmod(path, 0o600)
	if _, err := s.UpdatePlatform(context.Background(), "p", func(p *Platform) error { p.DNS.Domain = "x.example"; return nil }); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode after rewrite = %v, want 0600", st.Mode().Perm())
	}
}
