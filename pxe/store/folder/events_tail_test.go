package folder

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/events"
)

func appendEvents(t *testing.T, path string, nodes ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, n := range nodes {
		b, _ := json.Marshal(events.Event{Kind: events.Answer, Node: n})
		f.Write(append(b, '\n'))
	}
}

func drain(t *testing.T, tl *tail) (ids, nodes []string) {
	t.Helper()
	for range 10 {
		recs, err := tl.next()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			ids, nodes = append(ids, r.ID), append(nodes, r.Event.Node)
		}
	}
	return ids, nodes
}

// TestTailFollowsRotation: the stream reads the rotated part first, goes
// on across a rotation that happens while it follows, and resumes after
// an id of either file; an id whose file is gone starts from the oldest
// event kept.
func TestTailFollowsRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	appendEvents(t, path, "a", "b")
	os.Rename(path, path+".1")
	appendEvents(t, path, "c")
	tl, err := openTail(path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tl.close()
	ids, nodes := drain(t, tl)
	if !slices.Equal(nodes, []string{"a", "b", "c"}) {
		t.Fatalf("from the oldest: %v", nodes)
	}
	// Rotation while following: the rest of the old file, then the new.
	appendEvents(t, path, "d")
	os.Rename(path, path+".1")
	appendEvents(t, path, "e")
	more, nodes := drain(t, tl)
	if !slices.Equal(nodes, []string{"d", "e"}) {
		t.Fatalf("across the rotation: %v", nodes)
	}
	ids = append(ids, more...)
	// ids[2] is "c", now in the rotated part; ids[0] ("a") is gone.
	for _, tc := range []struct {
		after string
		want  []string
	}{
		{ids[2], []string{"d", "e"}},
		{ids[3], []string{"e"}},
		{ids[0], []string{"c", "d", "e"}},
		{events.FromNow, nil},
	} {
		tl, err := openTail(path, tc.after)
		if err != nil {
			t.Fatal(err)
		}
		if _, got := drain(t, tl); !slices.Equal(got, tc.want) {
			t.Errorf("after %s: %v, want %v", tc.after, got, tc.want)
		}
		tl.close()
	}
}

// TestMayBeOf: a line is passed over undecoded only when every "kind"
// key in it has a plain value that is not followed; anything the byte
// search cannot read is left to the decoder.
func TestMayBeOf(t *testing.T) {
	bmc := []events.Kind{events.BMC}
	tests := []struct {
		line string
		want bool
	}{
		{`{"time":"t","kind":"bmc","node":"a"}`, true},
		{`{"time":"t","kind":"dhcp-offer","mac":"m"}`, false},
		{`{"kind" :  "bmc"}`, true},
		{"{\"kind\"\t:\n\"answer\"}", false},
		{`{"kind":"answer","detail":"\"kind\":\"bmc\""}`, false},
		{`{"detail":"kind","kind":"answer"}`, false},
		{`{"detail":"kind","kind":"bmc"}`, true},
		{`{"kind":"b\u006dc"}`, true},
		{`{"kind":7}`, true},
		{`{"node":"a"}`, true},
		{`{"kind":"answer","nested":{"kind":"bmc"}}`, true},
		{`{"kind":"bmc`, true},
	}
	for _, tt := range tests {
		if got := mayBeOf([]byte(tt.line), bmc); got != tt.want {
			t.Errorf("mayBeOf(%s, bmc) = %v, want %v", tt.line, got, tt.want)
		}
	}
}
