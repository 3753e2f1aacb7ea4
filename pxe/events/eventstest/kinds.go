package eventstest

import (
	"context"
	"slices"

	"github.com/plasmactl/plasma-node/internal/storetest"
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
	storetest.NoError(t, s.Append(context.Background(), in...), "append")
	f := follow(s, "", events.BMC, events.Installed)
	f.until(h, 3)
	storetest.NoError(t, s.Append(context.Background(), events.Event{Kind: events.Answer, Node: "g"}, events.Event{Kind: events.BMC, Node: "h"}), "append")
	var g []string
	for _, r := range f.until(h, 4) {
		g = append(g, string(r.Event.Kind)+":"+r.Event.Node)
	}
	f.close(t)
	want := []string{"bmc:b", "installed:d", "bmc:e", "bmc:h"}
	if !slices.Equal(g, want) {
		t.Errorf("a follower of bmc and installed events got %v, want %v", g, want)
	}
}
