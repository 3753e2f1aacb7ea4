package plasmanode

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// A lowered pool count: the servers beyond the new count (the surplus)
// are adopted into state before the plan, so that the plan deletes them
// and the gate sees those deletes as planned; once applied, their node
// files go.

// adoptSurplus puts the surplus servers of a lowered count into state, so
// that the plan of the configuration without them deletes them: an
// import-only configuration of just those servers, every change ignored,
// planned and applied (state only; the plan is checked to change
// nothing). Servers already in a persistent state are not imported again.
// It returns the resource addresses the plan is to delete; on a dry run
// with a persistent backend the servers not in state are not imported
// but returned as missing deletes instead, so that a dry run writes
// nothing.
func (t *tofuRun) adoptSurplus(ctx context.Context, plat *nodes.Platform, pools map[string]nodes.Pool, surplus []providers.Existing, dryRun bool) ([]string, []tofu.Change, error) {
	if len(surplus) == 0 {
		return nil, nil, nil
	}
	acfg, err := t.prov.Configure(providers.Input{Platform: plat, Pools: pools, Existing: surplus, ImportOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("configure %s: %w", t.prov.Name(), err)
	}
	for i := range acfg.Resources {
		acfg.Resources[i].Lifecycle = &tofu.Lifecycle{IgnoreAllChanges: true}
	}
	deletes := make([]string, 0, len(acfg.Imports))
	for _, im := range acfg.Imports {
		deletes = append(deletes, im.To)
	}
	inState := map[string]bool{}
	if t.backend.Persistent() {
		if err := t.init(ctx, acfg); err != nil {
			return nil, nil, err
		}
		st, err := t.r.State(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("read state: %w", err)
		}
		for _, r := range rootResources(st) {
			inState[r.Address] = true
		}
	}
	var imports []tofu.Import
	var missing []tofu.Change
	for _, im := range acfg.Imports {
		if inState[im.To] {
			continue
		}
		if dryRun && t.backend.Persistent() {
			missing = append(missing, tofu.Change{Address: im.To, Type: strings.SplitN(im.To, ".", 2)[0], ImportID: im.ID})
			continue
		}
		imports = append(imports, im)
	}
	if len(imports) == 0 {
		return deletes, missing, nil
	}
	acfg.Imports = imports
	sp, sum, err := t.plan(ctx, acfg, tofu.PlanOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("adopt the servers a lowered count leaves out: %w", err)
	}
	if !sum.Empty() || len(sum.Imports) != len(imports) {
		return nil, nil, fmt.Errorf("adopt the servers a lowered count leaves out: the import plan is not import only (%s): %w", sum, ErrDestructivePlan)
	}
	if err := t.r.Apply(ctx, sp); err != nil {
		return nil, nil, fmt.Errorf("adopt the servers a lowered count leaves out: %w", err)
	}
	return deletes, missing, nil
}

// removeSurplus removes the node files of the surplus servers a lowered
// count deleted and returns their hostnames, sorted.
func (p *Project) removeSurplus(ctx context.Context, platform string, surplus []providers.Existing, existingNodes []*nodes.Node) ([]string, error) {
	gone := map[string]bool{}
	for _, e := range surplus {
		gone[e.ServerID] = true
	}
	var removed []string
	for _, n := range existingNodes {
		id := n.ProviderMetadata.ServerID
		if id == "" || !gone[id] {
			continue
		}
		if err := p.Store.DeleteNode(ctx, platform, n.Hostname); err != nil {
			return removed, fmt.Errorf("remove node file of deleted server %s (%s): %w", id, n.Hostname, err)
		}
		removed = append(removed, n.Hostname)
	}
	slices.Sort(removed)
	return removed, nil
}
