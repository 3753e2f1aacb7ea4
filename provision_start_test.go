package plasmanode_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// crate is a shelf whose servers must be started: each started server
// goes through the steps of a bare-metal install, except those in fail
// (refused by their BMC) and those in stall (never get past the offer).
type crate struct {
	*shelf
	mu          sync.Mutex
	started     []string
	fail, stall map[string]bool
}

var _ providers.Starter = (*crate)(nil)

func (c *crate) Name() string { return "crate" }

func (c *crate) Start(ctx context.Context, _ providers.Location, hosts []string, wait bool, fn func(providers.Progress)) ([]string, error) {
	c.mu.Lock()
	c.started = append(c.started, hosts...)
	c.mu.Unlock()
	var errs []error
	var notReady []string
	for _, h := range hosts {
		if c.fail[h] {
			err := fmt.Errorf("%s: BMC refused the credentials", h)
			fn(providers.Progress{Hostname: h, Step: events.Failed, Err: err})
			errs, notReady = append(errs, err), append(notReady, h)
			continue
		}
		fn(providers.Progress{Hostname: h, Step: events.Started, Detail: "power on via ipmi"})
		if !wait {
			notReady = append(notReady, h)
			continue
		}
		fn(providers.Progress{Hostname: h, Step: events.DHCPOffer})
		if c.stall[h] {
			notReady = append(notReady, h)
			continue
		}
		for _, s := range []events.Kind{events.Script, events.Kernel, events.Answer, events.Installed} {
			fn(providers.Progress{Hostname: h, Step: s})
		}
	}
	if len(notReady) > len(errs) && wait {
		<-ctx.Done() // the stalled ones never finish
		errs = append(errs, ctx.Err())
	}
	return notReady, errors.Join(errs...)
}

func TestProvisionBoot(t *testing.T) {
	tests := map[string]struct {
		boot, wait  bool
		fail, stall []string
		cancel      bool
		wantReady   []string
		wantErr     *plasmanode.NotReadyError
		wantSteps   []string
	}{
		"boot and wait until installed": {boot: true, wait: true, wantReady: []string{"lab-web-001", "lab-web-002"},
			wantSteps: []string{"lab-web-001 started", "lab-web-001 dhcp-offer", "lab-web-001 script", "lab-web-001 kernel", "lab-web-001 answer", "lab-web-001 installed",
				"lab-web-002 started", "lab-web-002 dhcp-offer", "lab-web-002 script", "lab-web-002 kernel", "lab-web-002 answer", "lab-web-002 installed"}},
		"boot without waiting": {boot: true, wantSteps: []string{"lab-web-001 started", "lab-web-002 started"}},
		"a BMC that refuses fails its machine, the other installs": {boot: true, wait: true, fail: []string{"lab-web-002"},
			wantReady: []string{"lab-web-001"}, wantErr: &plasmanode.NotReadyError{Platform: "lab", NotReady: []string{"lab-web-002"}, Failed: []string{"lab-web-002"}}},
		"a machine that never installs times out": {boot: true, wait: true, stall: []string{"lab-web-001"},
			wantReady: []string{"lab-web-002"}, wantErr: &plasmanode.NotReadyError{Platform: "lab", NotReady: []string{"lab-web-001"}, TimedOut: true}},
		"Ctrl-C stops waiting": {boot: true, wait: true, stall: []string{"lab-web-001", "lab-web-002"}, cancel: true,
			wantErr: &plasmanode.NotReadyError{Platform: "lab", NotReady: []string{"lab-web-001", "lab-web-002"}, Interrupted: true}},
		"no boot starts nothing": {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := &crate{shelf: &shelf{made: map[string]providers.Server{}}, fail: map[string]bool{}, stall: map[string]bool{}}
			for _, h := range tc.fail {
				c.fail[h] = true
			}
			for _, h := range tc.stall {
				c.stall[h] = true
			}
			set, err := providers.NewSet(c)
			if err != nil {
				t.Fatal(err)
			}
			p, err := plasmanode.OpenProject(ctx, t.TempDir(), plasmanode.Options{Providers: set})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Scaffold(ctx, plasmanode.ScaffoldOptions{Platform: "lab", Provider: "crate"}); err != nil {
				t.Fatal(err)
			}
			var steps []string
			o := plasmanode.ProvisionOptions{Platform: "lab", Specs: []string{"web:small:2"}, AutoApprove: true, Boot: tc.boot, Wait: tc.wait,
				WaitTimeout: 300 * time.Millisecond, OnProgress: func(s providers.Progress) {
					steps = append(steps, s.Hostname+" "+string(s.Step))
					if tc.cancel && s.Step == events.DHCPOffer && s.Hostname == "lab-web-002" {
						cancel()
					}
				}}
			res, err := p.Provision(ctx, o)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				var got *plasmanode.NotReadyError
				if !errors.As(err, &got) {
					t.Fatalf("err = %v, want a NotReadyError", err)
				}
				if diff := cmp.Diff(tc.wantErr, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Err" }, cmp.Ignore())); diff != "" {
					t.Errorf("NotReadyError (-want +got):\n%s", diff)
				}
				if len(tc.fail) > 0 && (got.Err == nil || !strings.Contains(got.Err.Error(), "lab-web-002: BMC refused the credentials")) {
					t.Errorf("the BMC's words are not in the error: %v", got.Err)
				}
			}
			if len(res.Nodes) != 2 {
				t.Errorf("nodes written: %d, want 2 whatever the boot did", len(res.Nodes))
			}
			if diff := cmp.Diff(tc.wantReady, res.Ready); diff != "" {
				t.Errorf("ready (-want +got):\n%s", diff)
			}
			if tc.wantSteps != nil {
				if diff := cmp.Diff(tc.wantSteps, steps); diff != "" {
					t.Errorf("steps (-want +got):\n%s", diff)
				}
			}
			if !tc.boot && len(c.started) > 0 {
				t.Errorf("started %v without Boot", c.started)
			}
			// A second run creates nothing and so starts nothing: an
			// existing machine may be installing.
			c.started = nil
			if _, err := p.Provision(context.Background(), plasmanode.ProvisionOptions{Platform: "lab", AutoApprove: true, Boot: true}); err != nil {
				t.Fatal(err)
			}
			if len(c.started) > 0 {
				t.Errorf("a run that created nothing started %v", c.started)
			}
		})
	}
}

// A provider that cannot start its servers refuses Boot before anything
// is written.
func TestProvisionBootNeedsAStarter(t *testing.T) {
	ctx := context.Background()
	s := &shelf{made: map[string]providers.Server{}}
	set, _ := providers.NewSet(s)
	p, err := plasmanode.OpenProject(ctx, t.TempDir(), plasmanode.Options{Providers: set})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Scaffold(ctx, plasmanode.ScaffoldOptions{Platform: "lab", Provider: "shelf"}); err != nil {
		t.Fatal(err)
	}
	_, err = p.Provision(ctx, plasmanode.ProvisionOptions{Platform: "lab", Specs: []string{"web:small:1"}, AutoApprove: true, Boot: true})
	if !errors.Is(err, plasmanode.ErrCannotStart) || len(s.made) != 0 {
		t.Errorf("err = %v, made %v; want ErrCannotStart and nothing made", err, s.made)
	}
}
