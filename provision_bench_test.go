package plasmanode_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/nodes"
)

// tofuTimer is a slog handler summing the "took" of the tofu runner's
// per-command records: the time spent in tofu itself.
type tofuTimer struct {
	mu    sync.Mutex
	total time.Duration
}

func (h *tofuTimer) Enabled(context.Context, slog.Level) bool { return true }
func (h *tofuTimer) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *tofuTimer) WithGroup(string) slog.Handler            { return h }
func (h *tofuTimer) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "tofu command" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "took" {
			h.mu.Lock()
			h.total += a.Value.Duration()
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

// BenchmarkProvisionPlan500 measures a dry-run provision of a platform
// of 500 servers, all adopted (500 import blocks, each with a label
// update, real tofu and hcloud
// plugin against the fake API), and reports the time spent in tofu
// (tofu-s/op: init, plan, show, version) apart from the time our code
// adds (ours-s/op: reading 500 node files, configuration, rendering,
// classification, the lock). Run with
//
//	go test -run '^$' -bench ProvisionPlan500 -benchtime 3x .
func BenchmarkProvisionPlan500(b *testing.B) {
	const n = 500
	c := newCloud(b)
	timer := &tofuTimer{}
	ctx := context.Background()
	p, err := plasmanode.OpenProject(ctx, c.dir, plasmanode.Options{Logger: slog.New(timer)})
	if err != nil {
		b.Fatal(err)
	}
	c.p = p
	for i := range n {
		name := fmt.Sprintf("demo-web-%03d", i+1)
		s := c.fake.AddServer(name, "cx22", "ubuntu-24.04", "fsn1")
		if err := p.Store.CreateNode(ctx, &nodes.Node{Hostname: name, Platform: "demo", Zones: []string{"platform.web"}, Machine: "cx22",
			Network:          nodes.Network{PublicIP: s.PublicIPv4, PrivateIP: fmt.Sprintf("192.168.%d.%d", 1+i/250, 1+i%250)},
			ProviderMetadata: nodes.ProviderMetadata{Provider: "hetzner", ServerID: fmt.Sprint(s.ID), Zone: "fsn1", Machine: "cx22"}}); err != nil {
			b.Fatal(err)
		}
	}
	var total, inTofu time.Duration
	b.ResetTimer()
	for range b.N {
		timer.total = 0
		start := time.Now()
		res, err := c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{fmt.Sprintf("web:cx22:%d", n)}, DryRun: true})
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		inTofu += timer.total
		// Servers the fake made outside tofu lack the labels plasma-node
		// sets, so each import also plans a label update.
		if s := res.Summary; len(s.Imports) != n || len(s.Creates)+len(s.Deletes)+len(s.Replacements)+len(s.DestructiveUpdates) != 0 {
			b.Fatalf("plan: %s, want %d imports, no create or delete", s, n)
		}
		c.out.Reset()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "total-s/op")
	b.ReportMetric(inTofu.Seconds()/float64(b.N), "tofu-s/op")
	b.ReportMetric((total-inTofu).Seconds()/float64(b.N), "ours-s/op")
}
