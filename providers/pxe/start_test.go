package pxe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// bootLab is a Booter over a state folder whose machines, once booted,
// send the window's events of a boot (by MAC first, then by name),
// except those that never boot.
type bootLab struct {
	*LocalRegistry
	mu      sync.Mutex
	events  chan backend.Event
	refuse  map[string]error
	silent  map[string]bool
	booted  []string
	streams int
}

func (b *bootLab) Boot(_ context.Context, name string) (client.BootReply, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.refuse[name]; err != nil {
		return client.BootReply{}, err
	}
	b.booted = append(b.booted, name)
	if !b.silent[name] {
		mac := map[string]string{"metal-control-001": "52:54:00:00:00:01", "metal-control-002": "52:54:00:00:00:02"}[name]
		go func() {
			// The firmware asks DHCP a moment after the BMC powered it
			// on: after Start has reported the machine started.
			time.Sleep(200 * time.Millisecond)
			for _, e := range []backend.Event{{Kind: events.DHCPOffer, MAC: mac}, {Kind: events.Script, Node: name, MAC: mac}, {Kind: events.Kernel, MAC: mac},
				{Kind: events.Answer, Node: name, Status: 200}, {Kind: events.FirstBoot, Status: 200}, {Kind: events.Installed, Node: name, Status: 200}} {
				b.events <- e
			}
		}()
	}
	return client.BootReply{Protocol: "ipmi", Mode: "legacy", Was: "off"}, nil
}

func (b *bootLab) Events(ctx context.Context, lastID string, fn func(string, backend.Event) error) error {
	b.mu.Lock()
	b.streams++
	b.mu.Unlock()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e := <-b.events:
			if err := fn(fmt.Sprint(i), e); err != nil {
				return err
			}
		}
	}
}

func TestStartFollowsEachMachineUntilInstalled(t *testing.T) {
	all := []events.Kind{events.Started, events.DHCPOffer, events.Script, events.Kernel, events.Answer, events.Installed}
	tests := map[string]struct {
		refuse    map[string]error
		silent    map[string]bool
		timeout   time.Duration
		wantReady []string
		wantErr   string
		wantSteps map[string][]events.Kind
	}{
		"both install": {wantReady: []string{"metal-control-001", "metal-control-002"}, wantSteps: map[string][]events.Kind{
			"metal-control-001": all,
			"metal-control-002": all}},
		"a refused boot fails its machine only": {refuse: map[string]error{"metal-control-002": errors.New("boot metal-control-002: the provisioning window is closed")},
			wantReady: []string{"metal-control-001"}, wantErr: "window is closed", wantSteps: map[string][]events.Kind{
				"metal-control-001": all, "metal-control-002": {events.Failed}}},
		"a machine that never boots times out": {silent: map[string]bool{"metal-control-002": true}, timeout: 2 * time.Second,
			wantReady: []string{"metal-control-001"}, wantErr: "deadline exceeded", wantSteps: map[string][]events.Kind{
				"metal-control-001": all, "metal-control-002": {events.Started}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			lab := &bootLab{LocalRegistry: &LocalRegistry{Dir: dir}, events: make(chan backend.Event, 32), refuse: tc.refuse, silent: tc.silent}
			for i, n := range []string{"metal-control-001", "metal-control-002"} {
				if _, err := lab.Register(ctx, reg(n, fmt.Sprintf("52:54:00:00:00:0%d", i+1)), registry.RegisterOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			pv := &Provider{Dial: func(context.Context, providers.Remote, *slog.Logger) (Registry, error) { return lab, nil }}
			at := providers.Location{Remote: &providers.Remote{URL: "https://site:8091", Token: "t"}}
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			var mu sync.Mutex
			got := map[string][]events.Kind{}
			notReady, err := pv.Start(ctx, at, []string{"metal-control-001", "metal-control-002"}, true, func(p providers.Progress) {
				mu.Lock()
				defer mu.Unlock()
				got[p.Hostname] = append(got[p.Hostname], p.Step)
			})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			var ready []string
			for _, h := range []string{"metal-control-001", "metal-control-002"} {
				if !strings.Contains(fmt.Sprint(notReady), h) {
					ready = append(ready, h)
				}
			}
			if diff := cmp.Diff(tc.wantReady, ready); diff != "" {
				t.Errorf("ready (-want +got):\n%s", diff)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tc.wantSteps, got); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}

// A local state folder does not boot machines: plasma-node does not drive
// BMCs itself.
func TestStartNeedsTheAPI(t *testing.T) {
	_, err := (&Provider{}).Start(context.Background(), providers.Location{Dir: t.TempDir()}, []string{"a"}, true, func(providers.Progress) {})
	if !errors.Is(err, ErrNoBootControl) {
		t.Errorf("err = %v, want ErrNoBootControl", err)
	}
}
