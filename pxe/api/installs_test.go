package api_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/registry/installtest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestARegistrationShowsItsInstall: GET /api/v1/registrations/{name} and
// the list carry an installed node's reported address, host key
// fingerprints (as ssh-keygen -l prints them) and report.
func TestARegistrationShowsItsInstall(t *testing.T) {
	var cfg api.Config
	e := newEnv(t, func(c *api.Config) {
		ins, err := folder.OpenInstalls(stateOf(c))
		if err != nil {
			t.Fatal(err)
		}
		c.Installs = ins
		cfg = *c
	})
	ctx := context.Background()
	sample := installtest.Sample("pve1")
	if _, err := cfg.Registry.Register(ctx, registry.Registration{Name: "pve1", MACs: []string{"52:54:00:12:34:56"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}}, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Registry.Consume(ctx, "pve1", registry.ConsumeRecord{Time: sample.Reported.Add(-10 * time.Minute), ClientIP: "192.0.2.10"}); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Events.Append(ctx, backend.Event{Time: sample.Reported, Kind: events.Installed, Node: "pve1", Status: 200}); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Installs.Put(ctx, sample); err != nil {
		t.Fatal(err)
	}
	r := e.do(t, "GET", "/api/v1/registrations/pve1", e.tokens["read"], "")
	if r.status != 200 {
		t.Fatalf("GET: %d %s", r.status, r.body)
	}
	var n backend.Node
	if err := json.Unmarshal([]byte(r.body), &n); err != nil {
		t.Fatal(err)
	}
	// ssh-keygen -lf of installtest.Sample's key.
	if n.State != backend.StateInstalled || n.Address != "192.0.2.10/24" || n.Install == nil || n.Install.MachineID != sample.Report.MachineID {
		t.Errorf("GET pve1: %s", r.body)
	}
	if diff := cmp.Diff([]string{"SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU"}, n.HostKeyFingerprints); diff != "" {
		t.Errorf("fingerprints (-ssh-keygen +got):\n%s", diff)
	}
	l := e.do(t, "GET", "/api/v1/registrations", e.tokens["read"], "")
	var list []backend.Node
	if err := json.Unmarshal([]byte(l.body), &list); err != nil || len(list) != 1 || list[0].Address != "192.0.2.10/24" {
		t.Errorf("list: %d %s (%v)", l.status, l.body, err)
	}
}
