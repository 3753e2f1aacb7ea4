package plasmanode

import (
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

// document is dp as a [Plan] of o's operation on plat; existing are the
// servers adopted, naming the nodes of dp.Servers.
func (dp DestroyPlan) document(o DestroyOptions, plat *nodes.Platform, existing []providers.Existing) Plan {
	op := o.op
	if op == "" {
		op = OpDestroy
	}
	// Delete keeps the node file through the destroy and removes it
	// itself.
	keepNodes := o.KeepNodes && op == OpDestroy
	var pl Plan
	switch dp.Action {
	case DestroyNodeFiles, DestroyForget:
		pl = newPlan(op, plat, SourceFiles)
		for _, h := range dp.Nodes {
			c := PlanChange{Action: ActionDelete, Object: ObjectNode, Node: h}
			if dp.Action == DestroyForget {
				c.Detail = "no server is destroyed"
			}
			pl.Changes = append(pl.Changes, c)
		}
	case DestroyWithdraw:
		pl = newPlan(op, plat, SourceProvider)
		for _, h := range dp.Nodes {
			c := PlanChange{Action: ActionDelete, Object: ObjectServer, Node: h,
				Detail: "its pending registration is withdrawn; an installed machine is not wiped"}
			for _, e := range existing {
				if hostOf(plat.Name, e) == h {
					c.Pool, c.ServerID = e.Pool, e.ServerID
				}
			}
			pl.Changes = append(pl.Changes, c)
		}
	default:
		src := SourceTofu
		if o.DryRun {
			src = SourceOffline
		}
		pl = newPlan(op, plat, src)
		if o.DryRun {
			pl.note("tofu did not run: the servers are named from the node files")
		}
		for _, s := range dp.Servers {
			c := PlanChange{Action: ActionDelete, Object: ObjectServer, ServerID: s.ImportID, Resource: s.Address}
			for _, e := range existing {
				if e.ServerID == s.ImportID {
					c.Node, c.Pool = hostOf(plat.Name, e), e.Pool
				}
			}
			pl.Changes = append(pl.Changes, c)
		}
	}
	if keepNodes {
		for i := range pl.Changes {
			pl.Changes[i].Detail = strings.TrimPrefix(pl.Changes[i].Detail+"; its node file is kept", "; ")
		}
	}
	slices.SortStableFunc(pl.Changes, func(a, b PlanChange) int { return strings.Compare(a.Node, b.Node) })
	pl.DryRun = o.DryRun
	return pl
}
