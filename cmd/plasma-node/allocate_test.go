package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTopologyConstrainsZones(t *testing.T) {
	dir := setup(t)
	os.WriteFile(filepath.Join(dir, "topology.yaml"), []byte("platform:\n  foundation:\n    - cluster:\n      - control\n      - nodes\n  cognition:\n    - data\n    - knowledge\n"), 0o644)
	mustRun(t, dir, "allocate", "node001", "platform.foundation.cluster.nodes")
	r := plasma(t, dir, "allocate", "node001", "platform.foundation.clster.nodes")
	if r.code != 2 || !strings.Contains(r.err, "platform.foundation.cluster.nodes") {
		t.Errorf("unknown zone: exit %d, %q; want 2 suggesting the nearest zone", r.code, r.err)
	}
}

func TestAllocateOps(t *testing.T) {
	dir := setup(t)
	out := mustRun(t, dir, "allocate", "node001", "-o", "json")
	var res struct {
		Zones    []string
		Modified bool
	}
	json.Unmarshal([]byte(out), &res)
	if diff := cmp.Diff([]string{"platform.foundation.cluster.control"}, res.Zones); diff != "" || res.Modified {
		t.Errorf("show mode: %s modified=%v", diff, res.Modified)
	}
	mustRun(t, dir, "node:allocate", "node001", "newsection", "platform.foundation.cluster.control/platform.foundation.cluster.nodes", "-e", "demo")
	out = mustRun(t, dir, "allocate", "node001", "platform.newsection-", "-o", "json")
	json.Unmarshal([]byte(out), &res)
	if diff := cmp.Diff([]string{"platform.foundation.cluster.nodes"}, res.Zones); diff != "" || !res.Modified {
		t.Errorf("after ops (-want +got): %s modified=%v", diff, res.Modified)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "platforms/demo/nodes/node001.yaml"))
	if strings.Contains(string(b), "platform.foundation.cluster.control") || !strings.Contains(string(b), "platform.foundation.cluster.nodes: \"true\"") {
		t.Errorf("labels not recomputed:\n%s", b)
	}
}

func TestAllocateAmbiguousNode(t *testing.T) {
	dir := setup(t)
	mustRun(t, dir, "add", "other")
	mustRun(t, dir, "add", "other", "--hostname", "node001")
	r := plasma(t, dir, "allocate", "node001", "platform.x")
	if r.code != 2 || !strings.Contains(r.err, "demo, other") {
		t.Errorf("exit %d, %q; want 2 listing both platforms", r.code, r.err)
	}
	mustRun(t, dir, "allocate", "node001", "platform.x", "-e", "other")
}

// TestConcurrentAllocatesFromTwoProcesses runs allocate in separate
// processes on one node: every change must survive.
func TestConcurrentAllocatesFromTwoProcesses(t *testing.T) {
	dir := setup(t)
	var wg sync.WaitGroup
	var want []string
	for i := range 8 {
		z := fmt.Sprintf("platform.zone%d", i)
		want = append(want, z)
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "--dir", dir, "allocate", "node001", z)
			cmd.Env = append(os.Environ(), "PLASMA_NODE_AS_MAIN=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("allocate %s: %v\n%s", z, err, out)
			}
		})
	}
	wg.Wait()
	want = append(want, "platform.foundation.cluster.control")
	slices.Sort(want)
	var res struct{ Zones []string }
	json.Unmarshal([]byte(mustRun(t, dir, "allocate", "node001", "-o", "json")), &res)
	if diff := cmp.Diff(want, res.Zones); diff != "" {
		t.Errorf("zones after concurrent allocates (-want +got):\n%s", diff)
	}
}
