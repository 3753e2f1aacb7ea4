package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/registry/installtest"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// TestListShowsTheInstall: once a node's installer reported, list -o
// json carries its address with prefix, its host key fingerprints (as
// ssh-keygen -l prints them) and the report.
func TestListShowsTheInstall(t *testing.T) {
	dir := t.TempDir()
	if r := np(t, dir, "register", "pve1", "--mac", "52:54:00:12:34:56", "--boot-disk", "any"); r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	ctx := context.Background()
	stores, err := store.Open(t.Context(), dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sample := installtest.Sample("pve1")
	if _, err := stores.Registrations().Consume(ctx, "pve1", registry.ConsumeRecord{Time: sample.Reported.Add(-5 * time.Minute), ClientIP: "192.0.2.10"}); err != nil {
		t.Fatal(err)
	}
	if err := stores.Events().Append(ctx, backend.Event{Time: sample.Reported, Kind: events.Installed, Node: "pve1", Status: 200}); err != nil {
		t.Fatal(err)
	}
	ins, err := stores.Installs()
	if err != nil {
		t.Fatal(err)
	}
	if err := ins.Put(ctx, sample); err != nil {
		t.Fatal(err)
	}
	r := np(t, dir, "list", "-o", "json")
	var st []backend.Node
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || len(st) != 1 {
		t.Fatalf("list -o json = %s (%v)", r.stdout, err)
	}
	n := st[0]
	if n.State != backend.StateInstalled || n.Address != "192.0.2.10/24" || len(n.HostKeyFingerprints) != 1 || n.HostKeyFingerprints[0] != "SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU" ||
		n.Install == nil || n.Install.Management.MAC != "52:54:00:12:34:56" || len(n.Install.HostKeys) != 1 {
		t.Errorf("list -o json:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, `"machine_id": "0123456789abcdef0123456789abcdef"`) {
		t.Errorf("list -o json lacks the machine-id:\n%s", r.stdout)
	}
}
