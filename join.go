package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// ErrUnknownPool: a pool that platform.yaml does not define.
var ErrUnknownPool = errors.New("unknown pool")

// JoinOptions describe a server to adopt into a pool.
type JoinOptions struct {
	// Platform the server joins. Required; it must exist.
	Platform string
	// ServerID is the provider's id of the server. Required.
	ServerID string
	// Pool is the platform.yaml pool the server joins. Required.
	Pool string
	// Hostname is the node's hostname, written back to the provider's
	// display name. Default: the display name when it is an RFC 1123
	// label, else a name derived from the server id
	// ([providers.DerivedHostname]: the id itself when it is a label,
	// ns5009999 for an OVH service name).
	Hostname string
	// DryRun stops after the plan: nothing is written, nothing applied.
	DryRun bool
	// AutoApprove applies a plan that destroys nothing without asking.
	AutoApprove bool
	// AllowDestructive lets AutoApprove apply destructive updates.
	AllowDestructive bool
	// Prompter asks for confirmation; nil with no AutoApprove (and no
	// DryRun) refuses before tofu runs, with [ErrNoPrompter].
	Prompter Prompter
	// OnPlan, when set, is given the classified import plan before it is
	// confirmed or applied (on a dry run too), for a front end to show
	// it before Prompter asks.
	OnPlan func(tofu.Summary)
	// TofuOptions say which tofu runs, with what environment and where
	// its output goes.
	TofuOptions
}

// JoinResult is what a join did.
type JoinResult struct {
	// Hostname is the node's hostname.
	Hostname string
	// Summary is the classified import plan.
	Summary tofu.Summary
	// Plan is the plan for people and programs: the server adopted, the
	// pool's count raised.
	Plan Plan
	// Applied reports whether the plan was applied.
	Applied bool
	// Declined reports that the person declined the plan.
	Declined bool
	// Node is the node file written, nil on a dry run or decline.
	Node *nodes.Node
}

// Join adopts an existing server into a pool: an import-only plan of the
// platform's known servers plus this one, confirmed by [Gate], applied
// exactly, then the node file is written and the pool's count in
// platform.yaml raised by one, so that a later provision with the same
// pools keeps the server. Nothing is written on a dry
// run, a decline or a failure. For a manual platform it only writes the
// node file (hostname: Hostname or the server id).
//
// Errors: [ErrUnknownPool]; [providers.ErrInvalidServerID];
// [nodes.ErrExists] for a server id already joined or a hostname taken;
// [nodes.ErrInvalidName]; [ErrDestructivePlan]; [ErrNoPrompter];
// [nodes.ErrLocked]; those of tofu.
func (p *Project) Join(ctx context.Context, o JoinOptions) (JoinResult, error) {
	var res JoinResult
	if o.Hostname != "" {
		if err := nodes.ValidateHostname(o.Hostname); err != nil {
			return res, &OptionError{Field: "Hostname", Err: err}
		}
	}
	plat, unlock, err := p.openPlatform(ctx, o.Platform, "join", false)
	if err != nil {
		return res, err
	}
	defer unlock()
	pool, ok := plat.Pools[o.Pool]
	if !ok {
		if len(plat.Pools) == 0 {
			return res, fmt.Errorf("pool %q: %w: no pools defined in %s; provision the platform with zone:type:count specs first, or add pools there", o.Pool, ErrUnknownPool, plat.File())
		}
		return res, fmt.Errorf("pool %q not defined in %s: %w (known pools: %s)", o.Pool, plat.File(), ErrUnknownPool,
			strings.Join(slices.Sorted(maps.Keys(plat.Pools)), ", "))
	}
	if o.ServerID == "" {
		return res, &OptionError{Field: "ServerID", Err: fmt.Errorf("%w: empty", providers.ErrInvalidServerID)}
	}
	var prov providers.Provider
	if !isManual(plat) {
		if prov, err = p.provider(plat, "join"); err != nil {
			return res, err
		}
		if err := prov.ValidateServerID(o.ServerID); err != nil {
			return res, &OptionError{Field: "ServerID", Err: err}
		}
	}
	ns, err := p.Store.Nodes(ctx, o.Platform)
	if err != nil {
		return res, err
	}
	for _, n := range ns {
		if n.ProviderMetadata.ServerID == o.ServerID {
			return res, fmt.Errorf("server_id %q already joined as node %s (%s): %w", o.ServerID, n.Hostname, n.File(), nodes.ErrExists)
		}
	}
	if prov == nil {
		return p.joinManual(ctx, o, plat, pool, ns)
	}
	if o.Hostname != "" {
		if err := hostnameFree(ns, o.Hostname); err != nil {
			return res, err
		}
	}
	return p.joinServer(ctx, o, plat, prov, ns)
}

// hostnameFree refuses h when a node of ns has it.
func hostnameFree(ns []*nodes.Node, h string) error {
	for _, n := range ns {
		if n.Hostname == h {
			return fmt.Errorf("hostname %s is taken by %s: %w", h, n.File(), nodes.ErrExists)
		}
	}
	return nil
}

// joinManual is Join on a manual platform: the node file only.
func (p *Project) joinManual(ctx context.Context, o JoinOptions, plat *nodes.Platform, pool nodes.Pool, ns []*nodes.Node) (JoinResult, error) {
	var res JoinResult
	h := o.Hostname
	if h == "" {
		h = o.ServerID
	}
	if err := nodes.ValidateHostname(h); err != nil {
		return res, &OptionNeededError{Field: "Hostname", Err: fmt.Errorf("hostname from the server id: %w", err)}
	}
	if err := hostnameFree(ns, h); err != nil {
		return res, err
	}
	res.Hostname = h
	res.Plan = newPlan(OpJoin, plat, SourceFiles)
	res.Plan.DryRun = o.DryRun
	res.Plan.Changes = append(res.Plan.Changes, raisePool(plat, o.Pool),
		PlanChange{Action: ActionCreate, Object: ObjectNode, Node: h, Pool: o.Pool, Machine: pool.Machine, ServerID: o.ServerID})
	if o.DryRun {
		return res, nil
	}
	res.Plan.Applied = true
	n, err := p.writeServers(ctx, plat, "manual", []providers.Server{{Hostname: h, ServerID: o.ServerID, Machine: pool.Machine, Pool: o.Pool}}, ns)
	if err != nil {
		return res, err
	}
	res.Node, res.Applied = n[0], true
	return res, p.raiseCount(ctx, o.Platform, o.Pool)
}

// joinServer is Join through tofu: an import-only plan of the platform's
// known servers and this one, confirmed, applied, then the node file.
func (p *Project) joinServer(ctx context.Context, o JoinOptions, plat *nodes.Platform, prov providers.Provider, ns []*nodes.Node) (JoinResult, error) {
	var res JoinResult
	existing := adopt(o.Platform, plat.Pools, ns)
	idx := 0
	for slices.ContainsFunc(existing, func(e providers.Existing) bool { return e.Pool == o.Pool && e.Index == idx }) {
		idx++
	}
	if err := canAsk(o.Prompter, o.AutoApprove || o.DryRun, "join"); err != nil {
		return res, err
	}
	run, err := p.startTofu(ctx, plat, prov, o.TofuOptions)
	if err != nil {
		return res, err
	}
	defer run.close()
	input := func(hostname string) providers.Input {
		return providers.Input{Platform: plat, Pools: plat.Pools, ImportOnly: true,
			Existing: append(slices.Clone(existing), providers.Existing{Pool: o.Pool, Index: idx, Hostname: hostname, ServerID: o.ServerID})}
	}
	planFor := func(hostname string) (*tofu.SavedPlan, tofu.Summary, error) {
		cfg, err := prov.Configure(input(hostname))
		if err != nil {
			return nil, tofu.Summary{}, fmt.Errorf("configure %s: %w", prov.Name(), err)
		}
		return run.plan(ctx, cfg, tofu.PlanOptions{})
	}
	if res.Hostname, err = o.hostname(run, prov, planFor, ns); err != nil {
		return res, err
	}
	sp, sum, err := planFor(res.Hostname)
	if err != nil {
		return res, err
	}
	res.Summary = sum
	res.Plan = summaryPlan(OpJoin, SourceTofu, sum, input(res.Hostname), ns)
	res.Plan.DryRun = o.DryRun
	res.Plan.Changes = append([]PlanChange{raisePool(plat, o.Pool)}, res.Plan.Changes...)
	if o.OnPlan != nil {
		o.OnPlan(sum)
	}
	if !slices.ContainsFunc(sum.Imports, func(c tofu.Change) bool { return c.ImportID == o.ServerID }) {
		return res, fmt.Errorf("join %s: the plan does not import server %s", o.Platform, o.ServerID)
	}
	if o.DryRun {
		return res, nil
	}
	ok, err := Gate(ctx, sum, GateOptions{Command: "join", AutoApprove: o.AutoApprove, AllowDestructive: o.AllowDestructive,
		Prompter: o.Prompter, StatePath: run.statePath()})
	if err != nil || !ok {
		res.Declined = err == nil
		res.Plan.Declined = res.Declined
		return res, err
	}
	if err := run.r.Apply(ctx, sp); err != nil {
		return res, fmt.Errorf("apply join plan of platform %s: %w", o.Platform, err)
	}
	res.Applied, res.Plan.Applied = true, true
	if res.Node, err = p.writeJoined(ctx, run, plat, o.ServerID, ns); err != nil {
		return res, err
	}
	return res, p.raiseCount(ctx, o.Platform, o.Pool)
}

// joinProbe is the hostname of the first plan of a join without one,
// when the name derived from the server id is unusable: a first plan
// only reads the server's display name and is never applied.
const joinProbe = "plasma-node-join-probe"

// hostname returns the joined node's hostname: Hostname; else the
// server's display name when it is an RFC 1123 label; else the name prov
// derives from the server id ([providers.DerivedHostname]: ns5009999 for
// an OVH service name). The display name is read from a first plan,
// made under the derived name (a valid label, which the server id of
// OVH and Scaleway is not).
func (o JoinOptions) hostname(run *tofuRun, prov providers.Provider, planFor func(string) (*tofu.SavedPlan, tofu.Summary, error), ns []*nodes.Node) (string, error) {
	if o.Hostname != "" {
		return o.Hostname, nil
	}
	derived := providers.DerivedHostname(prov, o.ServerID)
	probe := derived
	if probe == "" || hostnameFree(ns, probe) != nil {
		probe = joinProbe
	}
	if _, _, err := planFor(probe); err != nil {
		return "", err
	}
	hostname, from := derived, "the name derived from its id"
	if dn := displayName(run.last, o.ServerID); dn != "" && nodes.ValidateHostname(dn) == nil {
		hostname, from = dn, "its display name"
	}
	if hostname == "" {
		return "", &OptionNeededError{Field: "Hostname", Err: fmt.Errorf("server %s: %w: no display name that is a hostname, and no hostname derives from its id", o.ServerID, nodes.ErrInvalidName)}
	}
	if err := hostnameFree(ns, hostname); err != nil {
		return "", &OptionNeededError{Field: "Hostname", Err: fmt.Errorf("server %s, named by %s: %w", o.ServerID, from, err)}
	}
	return hostname, nil
}

// writeJoined writes the node file of the server joined as id, from the
// applied state's outputs.
func (p *Project) writeJoined(ctx context.Context, run *tofuRun, plat *nodes.Platform, id string, ns []*nodes.Node) (*nodes.Node, error) {
	servers, err := run.servers(ctx)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(servers, func(s providers.Server) bool { return s.ServerID == id })
	if i < 0 {
		return nil, fmt.Errorf("tofu outputs did not include server_id %q: adoption may have failed", id)
	}
	written, err := p.writeServers(ctx, plat, run.prov.Name(), servers[i:i+1], ns)
	if err != nil {
		return nil, err
	}
	return written[0], nil
}

// raiseCount adds one to the count of pool in platform.yaml, for a
// server joined into it: a later provision with the pools as they are
// adopts it instead of planning its deletion as a surplus.
func (p *Project) raiseCount(ctx context.Context, platform, pool string) error {
	if _, err := p.Store.UpdatePlatform(ctx, platform, func(pl *nodes.Platform) error {
		pp, ok := pl.Pools[pool]
		if !ok {
			return fmt.Errorf("pool %q: %w", pool, ErrUnknownPool)
		}
		pp.Count++
		pl.Pools[pool] = pp
		return nil
	}); err != nil {
		return fmt.Errorf("raise the count of pool %s in platform.yaml for the joined server: %w", pool, err)
	}
	return nil
}

// displayName reads the display name of the server imported as id from
// the plan's prior state: display_name, else name.
func displayName(plan *tfjson.Plan, id string) string {
	if plan == nil {
		return ""
	}
	for _, rc := range plan.ResourceChanges {
		if rc.Change == nil || rc.Change.Importing == nil || rc.Change.Importing.ID != id {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		for _, k := range []string{"display_name", "name"} {
			if s, ok := before[k].(string); ok && s != "" {
				return s
			}
		}
	}
	return ""
}
