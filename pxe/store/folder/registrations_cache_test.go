package folder

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// The scan cache never serves a stale registration: an edit in place of
// the same size, a rewrite, a removal and a copy the caller changes are
// each seen as they are on disk.
func TestScanCacheFollowsTheFiles(t *testing.T) {
	ctx := context.Background()
	g, err := OpenRegistrations(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []registry.Registration{
		{Name: "a", MACs: []string{"52:54:00:00:00:0a"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}},
		{Name: "b", MACs: []string{"52:54:00:00:00:0b"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}},
	} {
		if _, err := g.Register(ctx, r, registry.RegisterOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	macs := func() map[string]string {
		t.Helper()
		rs, broken, err := g.Scan(ctx)
		if err != nil || len(broken) > 0 {
			t.Fatalf("scan: %v %v", broken, err)
		}
		out := map[string]string{}
		for _, r := range rs {
			out[r.Name] = strings.Join(r.MACs, ",")
		}
		return out
	}
	if diff := cmp.Diff(map[string]string{"a": "52:54:00:00:00:0a", "b": "52:54:00:00:00:0b"}, macs()); diff != "" {
		t.Fatalf("first scan (-want +got):\n%s", diff)
	}
	// A caller changing what it got changes nothing kept.
	rs, _, _ := g.Scan(ctx)
	rs[0].MACs[0] = "ff:ff:ff:ff:ff:ff"
	if got := macs()["a"]; got != "52:54:00:00:00:0a" {
		t.Errorf("a caller's change reached the cache: %s", got)
	}
	// An edit in place, same size, by hand.
	path := filepath.Join(g.Dir(), "a.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "52:54:00:00:00:0a", "52:54:00:00:00:0c", 1)
	if len(edited) != len(data) || edited == string(data) {
		t.Fatal("the edit is not one of the same size")
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte(edited), 0)
	f.Close()
	if got := macs()["a"]; got != "52:54:00:00:00:0c" {
		t.Errorf("an edit in place is not seen: %s", got)
	}
	// A rewrite through the store, and a removal.
	if _, err := g.Register(ctx, registry.Registration{Name: "b", MACs: []string{"52:54:00:00:00:0d"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}}, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"b": "52:54:00:00:00:0d"}, macs()); diff != "" {
		t.Errorf("after a rewrite and a removal (-want +got):\n%s", diff)
	}
	g.cacheMu.Lock()
	n := len(g.cache)
	g.cacheMu.Unlock()
	if n != 1 {
		t.Errorf("the cache holds %d files; want 1 (the removed one forgotten)", n)
	}
	// A file made broken is broken at once.
	os.WriteFile(filepath.Join(g.Dir(), "b.json"), []byte("{not json"), 0o600)
	if _, broken, _ := g.Scan(ctx); len(broken) != 1 {
		t.Errorf("a broken rewrite is not seen: %v", broken)
	}
}
