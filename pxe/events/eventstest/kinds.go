package eventstest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// followKinds: a follower of some kinds (events.FollowKinds: the store's
// own filter, or Follow with one) gets those, in order, and no other,
// whatever the other events' details say.
func followKinds(t T, h Harness) {
	s := h.New(t, 0)
	in := []events.Event{
		{Kind: events.Answer, Node: "a", Detail: `"kind":"bmc"`},
		{Kind: events.BMC, Node: "b"},
		{Kind: events.DHCPOffer, MAC: "52:54:00:00:00:01", Node: "c", Detail: `kind": "bmc"`},
		{Kind: events.Installed, Node: "d"},
		{Kind: events.BMC, Node: "e", Detail: `"kind":"answer" \"kind\":\"x\"`},
		{Kind: events.TFTP, Node: "f", Detail: `{"kind" : "installed"}`},
	}
	if err := s.Append(context.Background(), in...); err != nil {
		t.Fatalf("append: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var got []string
	more := make(chan struct{}, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- events.FollowKinds(ctx, s, "", []events.Kind{events.BMC, events.Installed}, func(r events.Record) error {
			mu.Lock()
			got = append(got, string(r.Event.Kind)+":"+r.Event.Node)
			mu.Unlock()
			select {
			case more <- struct{}{}:
			default:
			}
			return nil
		})
	}()
	until := func(n int) []string {
		deadline := time.After(wait(h))
		for {
			mu.Lock()
			g := slices.Clone(got)
			mu.Unlock()
			if len(g) >= n {
				return g
			}
			select {
			case <-more:
			case <-deadline:
				return g
			}
		}
	}
	until(3)
	if err := s.Append(context.Background(), events.Event{Kind: events.Answer, Node: "g"}, events.Event{Kind: events.BMC, Node: "h"}); err != nil {
		t.Fatalf("append: %v", err)
	}
	g := until(4)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("follow ended with %v, want the context's error", err)
	}
	want := []string{"bmc:b", "installed:d", "bmc:e", "bmc:h"}
	if !slices.Equal(g, want) {
		t.Errorf("a follower of bmc and installed events got %v, want %v", g, want)
	}
}
