package nodes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// addedZone is the zone FuzzParseNode adds before rewriting a node file.
const addedZone = "fuzz.added.zone"

// FuzzParseNode feeds bytes to the node and platform file parser. It must
// never panic, and a node file that parses must survive a rewrite that adds
// one zone: the new bytes parse again to the same node plus that zone.
func FuzzParseNode(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for _, l := range "bcdefghi" {
		prev := string(l - 1)
		bomb += string(l) + ": &" + string(l) + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
	}
	for _, s := range []string{
		"",
		"---\n",
		"~\n",
		"hostname: a\n",
		bomb,
		"labels: " + strings.Repeat("{a: ", 200) + "b" + strings.Repeat("}", 200) + "\n",
		"zones: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n",
		"hostname: a\n\tzones: [b]\n",
		"hostname:\ta\nzones:\t[b]\n",
		"hostname: a\n---\nhostname: b\n",
		"hostname: a\n...\n",
		"- a\n- b\n",
		"hostname: [a]\n",
		"zones: *x\n",
		"base: &b {public_ip: 1.2.3.4}\nnetwork:\n  <<: *b\n  private_ip: 10.0.0.1\n",
		"zones: &z [a, b]\nk8s_labels: {}\nother: *z\n",
		"zones: a\n",
		"zones: [a, b] # kept\n# foot\n",
		"zones:\n",
		"zones: []\nlabels: {}\n",
		"network: ~\n",
		"!!map {hostname: a}\n",
		"? [a]\n: b\n",
		"\"hostname\": 'x'\nzones: [\"a\"]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Platform
		if _, err := parseDocument("platform.yaml", data, &p); err == nil {
			_ = clonePlatform(&p)
		}
		var n Node
		doc, err := parseDocument("node.yaml", data, &n)
		if err != nil {
			return
		}
		old := cloneNode(&n)
		cur := cloneNode(&n)
		cur.Zones = append(cur.Zones, addedZone)
		out, err := doc.update(old, cur)
		if err != nil {
			t.Fatalf("update of a parsed file failed: %v\ninput:\n%s", err, data)
		}
		var again Node
		if _, err := parseDocument("node.yaml", out, &again); err != nil {
			t.Fatalf("rewritten file does not parse: %v\ninput:\n%s\noutput:\n%s", err, data, out)
		}
		if diff := cmp.Diff(cur, &again, cmpopts.IgnoreUnexported(Node{}), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip changed the node (-want +got):\n%s\ninput:\n%s\noutput:\n%s", diff, data, out)
		}
	})
}
