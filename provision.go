package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
	"github.com/plasmactl/plasma-node/zones"
)

// ErrNoPools: provision got no specs and the platform has no pools.
var ErrNoPools = errors.New("no pools configured")

// ProvisionOptions describe a provision run.
type ProvisionOptions struct {
	// Platform to provision. Required; it must exist.
	Platform string
	// Specs are zone:type:count specs; each becomes (or updates) a pool.
	// None means the platform's pools as they are.
	Specs []string
	// DryRun stops after the plan: nothing is written, nothing applied.
	DryRun bool
	// AutoApprove applies a plan that destroys nothing without asking.
	AutoApprove bool
	// AllowDestructive lets AutoApprove apply destructive updates.
	AllowDestructive bool
	// AllowDelete lets AutoApprove delete the servers a lowered count
	// leaves out. Without AutoApprove those deletes need a typed "yes";
	// AutoApprove alone never deletes a server.
	AllowDelete bool
	// Prompter asks for confirmation; nil with no AutoApprove refuses.
	Prompter Prompter
	// OnPlan, when set, is given the classified plan before it is
	// confirmed or applied (on a dry run too), for a front end to show
	// it before Prompter asks.
	OnPlan func(tofu.Summary)
	// Stdout and Stderr receive tofu's output; nil discards it.
	Stdout, Stderr io.Writer
	// TofuPath is an explicit tofu or terraform binary; empty looks up
	// tofu, then terraform, on PATH.
	TofuPath string
	// Getenv reads credentials from the environment; nil means
	// os.Getenv.
	Getenv func(string) string
	// Env is added to tofu's environment (TF_CLI_CONFIG_FILE, say).
	Env map[string]string
	// ProvisionerDir is node-provisioner's state folder, where a pxe
	// platform's registrations go. Empty: [ProvisionerDir]'s choice.
	ProvisionerDir string
	// HardwareFile lists the bare-metal machines new servers of a pxe
	// platform are taken from (format: providers/pxe.ParseHardware).
	HardwareFile string
}

// ProvisionResult is what a provision run did.
type ProvisionResult struct {
	// Summary is the classified plan.
	Summary tofu.Summary
	// Pools are the pools the run configured.
	Pools map[string]nodes.Pool
	// Applied reports whether the plan was applied.
	Applied bool
	// Declined reports that the person declined the plan.
	Declined bool
	// Nodes are the node files written, sorted by hostname.
	Nodes []*nodes.Node
	// Removed are the hostnames whose servers a lowered count deleted and
	// whose node files were removed, sorted.
	Removed []string
}

// Provision makes the platform's servers match its pools, after
// turning Specs into pools: existing nodes are adopted by server id, the
// plan is classified and confirmed ([Gate]), applied, and each server
// becomes a node file. With the default local backend state is
// transient: it is removed after the run, node files being the truth;
// with infrastructure.state backend pg or s3 it is kept there, under
// tofu's own lock (credentials from PG_CONN_STR or AWS_* only). A run already in progress for the platform
// makes it fail at once (an error wrapping [nodes.ErrLocked] naming the
// holder).
//
// A [providers.Direct] provider (pxe) is planned and applied by itself
// instead of by tofu, through the same gate: for pxe every new server is
// a machine of the hardware lists registered with node-provisioner in
// ProvisionerDir, then a node file.
//
// Errors: [zones.ErrInvalidSpec] (nothing written), [ErrNoPools],
// [providers.ErrNoInfrastructure] for manual, [ErrDestructivePlan],
// [ErrNoPrompter], [nodes.ErrLocked], and those of tofu.
func (p *Project) Provision(ctx context.Context, o ProvisionOptions) (ProvisionResult, error) {
	var res ProvisionResult
	specPools, err := p.specPools(o.Specs)
	if err != nil {
		return res, err
	}
	l, err := p.Store.Lock(ctx, o.Platform, "plasma-node provision", false)
	if err != nil {
		return res, err
	}
	defer l.Unlock()
	plat, err := p.Store.Platform(ctx, o.Platform)
	if err != nil {
		return res, err
	}
	pools := maps.Clone(plat.Pools)
	if pools == nil {
		pools = map[string]nodes.Pool{}
	}
	for name, sp := range specPools {
		old, ok := pools[name]
		if ok {
			sp.IPPool = old.IPPool
			sp.Hardware = old.Hardware
		}
		pools[name] = sp
	}
	if len(pools) == 0 {
		return res, fmt.Errorf("platform %s: %w: give zone:type:count specs, or pools in platform.yaml", o.Platform, ErrNoPools)
	}
	res.Pools = pools
	prov, err := p.provider(plat, "provision")
	if err != nil {
		return res, err
	}
	existingNodes, err := p.Store.Nodes(ctx, o.Platform)
	if err != nil {
		return res, err
	}
	existing := adopt(o.Platform, pools, existingNodes)
	cplat := *plat
	cplat.Pools = pools
	if d, ok := prov.(providers.Direct); ok {
		in := providers.DirectInput{Input: providers.Input{Platform: &cplat, Pools: pools, Existing: existing},
			Dir: p.ProvisionerDir(plat, o.ProvisionerDir), HardwareFile: o.HardwareFile, Logger: p.log}
		return p.provisionDirect(ctx, o, d, in, plat, existingNodes, res)
	}
	in := providers.Input{Platform: &cplat, Pools: pools, Existing: existing}
	cfg, err := prov.Configure(in)
	if err != nil {
		return res, fmt.Errorf("configure %s: %w", prov.Name(), err)
	}
	run, err := p.startTofu(ctx, plat, prov, runOptions{TofuPath: o.TofuPath, Getenv: o.Getenv, Env: o.Env, Stdout: o.Stdout, Stderr: o.Stderr})
	if err != nil {
		return res, err
	}
	defer run.close()
	surplus := providers.Surplus(in)
	deletes, missing, err := run.adoptSurplus(ctx, &cplat, pools, surplus, o.DryRun)
	if err != nil {
		return res, err
	}
	sp, sum, err := run.plan(ctx, cfg, tofu.PlanOptions{})
	if err != nil {
		return res, err
	}
	// A dry run against a persistent backend does not record the surplus
	// servers in state: their deletes are listed from the node files.
	sum.Deletes = append(sum.Deletes, missing...)
	res.Summary = sum
	if o.OnPlan != nil {
		o.OnPlan(sum)
	}
	if o.DryRun {
		return res, nil
	}
	if !sum.Empty() {
		ok, err := Gate(ctx, sum, GateOptions{Command: "provision", AutoApprove: o.AutoApprove, AllowDestructive: o.AllowDestructive,
			Prompter: o.Prompter, StatePath: run.statePath(), Deletes: deletes, AllowDelete: o.AllowDelete})
		if err != nil {
			return res, err
		}
		if !ok {
			res.Declined = true
			return res, nil
		}
	}
	if !maps.EqualFunc(plat.Pools, pools, poolEqual) {
		if _, err := p.Store.UpdatePlatform(ctx, o.Platform, func(pl *nodes.Platform) error {
			pl.Pools = pools
			return nil
		}); err != nil {
			return res, fmt.Errorf("write pools: %w", err)
		}
		plat.Pools = pools
	}
	if err := run.r.Apply(ctx, sp); err != nil {
		return res, fmt.Errorf("apply plan of platform %s: %w", o.Platform, err)
	}
	res.Applied = true
	servers, err := run.servers(ctx)
	if err != nil {
		return res, err
	}
	res.Nodes, err = p.writeServers(ctx, plat, prov.Name(), servers, existingNodes)
	if err != nil {
		return res, err
	}
	gone := map[string]bool{}
	for _, e := range surplus {
		gone[e.ServerID] = true
	}
	var removed []*nodes.Node
	for _, n := range existingNodes {
		if id := n.ProviderMetadata.ServerID; id != "" && gone[id] {
			removed = append(removed, n)
		}
	}
	for _, n := range removed {
		if err := p.Store.DeleteNode(ctx, o.Platform, n.Hostname); err != nil {
			return res, fmt.Errorf("remove node file of deleted server %s (%s): %w", n.ProviderMetadata.ServerID, n.Hostname, err)
		}
		res.Removed = append(res.Removed, n.Hostname)
	}
	slices.Sort(res.Removed)
	return res, nil
}

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

func poolEqual(a, b nodes.Pool) bool {
	return slices.Equal(a.Zones, b.Zones) && a.Machine == b.Machine && a.Count == b.Count && a.IPPool == b.IPPool &&
		slices.EqualFunc(a.Hardware, b.Hardware, func(x, y nodes.Machine) bool {
			return x.Pool == y.Pool && slices.Equal(x.MACs, y.MACs) && x.Serial == y.Serial && x.UUID == y.UUID &&
				x.BootDisk == y.BootDisk && slices.Equal(x.DataPools, y.DataPools)
		})
}

var nonLabel = regexp.MustCompile(`[^a-z0-9]+`)

func poolLabel(s string) string {
	return strings.Trim(nonLabel.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

// specPools parses specs into pools named by their zone's last segment,
// with the machine type added when two specs would share a name.
func (p *Project) specPools(specs []string) (map[string]nodes.Pool, error) {
	var parsed []zones.Spec
	byName := map[string]int{}
	for _, s := range specs {
		sp, err := zones.ParseSpec(s)
		if err != nil {
			return nil, err
		}
		if err := p.Topology.Check(sp.Zone); err != nil {
			return nil, err
		}
		parsed = append(parsed, sp)
		byName[baseName(sp)]++
	}
	out := map[string]nodes.Pool{}
	for _, sp := range parsed {
		name := baseName(sp)
		if byName[name] > 1 {
			name = poolLabel(name + "-" + sp.Type)
		}
		if len(name) > 63 || name == "" {
			return nil, fmt.Errorf("spec %s: %w: pool name %q is not an RFC 1123 label", sp, zones.ErrInvalidSpec, name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("spec %s: %w: pool %s given twice; want one spec per zone and type", sp, zones.ErrInvalidSpec, name)
		}
		out[name] = nodes.Pool{Zones: []string{sp.Zone}, Machine: sp.Type, Count: sp.Count}
	}
	return out, nil
}

func baseName(sp zones.Spec) string {
	return poolLabel(sp.Zone[strings.LastIndexByte(sp.Zone, '.')+1:])
}

// provider returns the platform's provider, refusing manual for op.
func (p *Project) provider(plat *nodes.Platform, op string) (providers.Provider, error) {
	name := plat.Infrastructure.MetalProvider
	if name == "manual" || name == "" {
		return nil, fmt.Errorf("platform %s uses the manual provider: %w: nothing to %s", plat.Name, providers.ErrNoInfrastructure, op)
	}
	prov, err := p.providers.Get(name)
	if err != nil {
		return nil, fmt.Errorf("platform %s: %w", plat.Name, err)
	}
	return prov, nil
}

// adopt returns the servers of ns to import: a node named
// <platform>-<pool>-NNN in slot NNN-1, any other with a server id in
// the pool of the same zones, in the lowest free slot by server id.
func adopt(platform string, pools map[string]nodes.Pool, ns []*nodes.Node) []providers.Existing {
	var out []providers.Existing
	used := map[string]map[int]bool{}
	var rest []*nodes.Node
	for _, n := range ns {
		id := n.ProviderMetadata.ServerID
		if id == "" {
			continue
		}
		if pool, idx, ok := slotOf(platform, pools, n.Hostname); ok && !used[pool][idx] {
			if used[pool] == nil {
				used[pool] = map[int]bool{}
			}
			used[pool][idx] = true
			out = append(out, providers.Existing{Pool: pool, Index: idx, ServerID: id})
			continue
		}
		rest = append(rest, n)
	}
	slices.SortFunc(rest, func(a, b *nodes.Node) int {
		return strings.Compare(a.ProviderMetadata.ServerID, b.ProviderMetadata.ServerID)
	})
	names := slices.Sorted(maps.Keys(pools))
	for _, n := range rest {
		for _, name := range names {
			if !sameSet(pools[name].Zones, n.Zones) {
				continue
			}
			if used[name] == nil {
				used[name] = map[int]bool{}
			}
			idx := 0
			for used[name][idx] {
				idx++
			}
			used[name][idx] = true
			out = append(out, providers.Existing{Pool: name, Index: idx, Hostname: n.Hostname, ServerID: n.ProviderMetadata.ServerID})
			break
		}
	}
	return out
}

// slotOf parses a hostname <platform>-<pool>-NNN of a known pool.
func slotOf(platform string, pools map[string]nodes.Pool, hostname string) (string, int, bool) {
	rest, ok := strings.CutPrefix(hostname, platform+"-")
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '-')
	if i < 0 || len(rest)-i-1 < 3 {
		return "", 0, false
	}
	pool, num := rest[:i], rest[i+1:]
	k, err := strconv.Atoi(num)
	if _, known := pools[pool]; err != nil || !known || k < 1 || strings.HasPrefix(num, "+") {
		return "", 0, false
	}
	return pool, k - 1, true
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

// runOptions are the tofu settings shared by provision, join and destroy.
type runOptions struct {
	TofuPath       string
	Getenv         func(string) string
	Env            map[string]string
	Stdout, Stderr io.Writer
}

// tofuRun is a working directory and runner for one operation.
type tofuRun struct {
	wd   *tofu.Workdir
	r    *tofu.Runner
	prov providers.Provider
	log  func(msg string, args ...any)
	// last is the JSON of the last plan.
	last *tfjson.Plan
	// backend is where the state is kept, set into every configuration.
	backend tofu.Backend
	// inited is set once tofu init ran: the configurations of one run
	// differ only in resources and imports (same providers, same
	// backend), so later ones need no init of their own.
	inited bool
}

func (p *Project) startTofu(ctx context.Context, plat *nodes.Platform, prov providers.Provider, o runOptions) (*tofuRun, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	env, err := prov.Credentials(plat, getenv)
	if err != nil {
		return nil, fmt.Errorf("platform %s credentials: %w", plat.Name, err)
	}
	backend, benv, err := stateBackend(plat, getenv)
	if err != nil {
		return nil, err
	}
	for k, v := range benv {
		env[k] = v
	}
	for k, v := range o.Env {
		env[k] = v
	}
	bin, err := tofu.Find(ctx, tofu.FindOptions{Path: o.TofuPath, Logger: p.log})
	if err != nil {
		return nil, err
	}
	wd, err := tofu.OpenWorkdir(p.Store.Dir(), plat.Name)
	if err != nil {
		return nil, err
	}
	if err := wd.Clean(tofu.CleanOptions{}); err != nil {
		return nil, fmt.Errorf("clean %s: %w", wd.Dir(), err)
	}
	r, err := tofu.NewRunner(bin, wd, tofu.RunnerOptions{Stdout: o.Stdout, Stderr: o.Stderr, Env: env, Logger: p.log})
	if err != nil {
		return nil, err
	}
	return &tofuRun{wd: wd, r: r, prov: prov, log: p.log.Warn, backend: backend}, nil
}

// close removes the transient state, plan and variables files.
func (t *tofuRun) close() {
	if err := t.wd.Clean(tofu.CleanOptions{}); err != nil {
		t.log("clean tofu working directory", "dir", t.wd.Dir(), "err", err)
	}
}

// statePath names where the state is, for messages.
func (t *tofuRun) statePath() string {
	if t.backend.Persistent() {
		return "the " + t.backend.Type + " backend"
	}
	return t.wd.Path(tofu.StateFile)
}

// init writes cfg, with the run's backend, and runs tofu init the first
// time.
func (t *tofuRun) init(ctx context.Context, cfg *tofu.Config) error {
	cfg.Backend = t.backend
	b, err := cfg.Render()
	if err != nil {
		return fmt.Errorf("write configuration: %w", err)
	}
	if err := t.wd.WriteConfigBytes(b); err != nil {
		return err
	}
	if t.inited {
		return nil
	}
	if err := t.r.Init(ctx, tofu.InitOptions{Reconfigure: true}); err != nil {
		return fmt.Errorf("tofu init: %w", err)
	}
	t.inited = true
	return nil
}

func (t *tofuRun) plan(ctx context.Context, cfg *tofu.Config, po tofu.PlanOptions) (*tofu.SavedPlan, tofu.Summary, error) {
	if cfg != nil {
		if err := t.init(ctx, cfg); err != nil {
			return nil, tofu.Summary{}, err
		}
	}
	sp, err := t.r.Plan(ctx, po)
	if err != nil {
		return nil, tofu.Summary{}, fmt.Errorf("tofu plan: %w", err)
	}
	js, err := t.r.Show(ctx, sp)
	if err != nil {
		return nil, tofu.Summary{}, fmt.Errorf("tofu show: %w", err)
	}
	t.last = js
	return sp, tofu.Classify(js, t.prov.Destructive()), nil
}

func (t *tofuRun) servers(ctx context.Context) ([]providers.Server, error) {
	out, err := t.r.Output(ctx)
	if err != nil {
		return nil, fmt.Errorf("tofu output: %w", err)
	}
	s, err := t.prov.Servers(out)
	if err != nil {
		return nil, fmt.Errorf("%s servers: %w", t.prov.Name(), err)
	}
	if e, ok := t.prov.(providers.StateEnricher); ok && len(s) > 0 {
		st, err := t.r.State(ctx)
		if err != nil {
			return nil, fmt.Errorf("read state: %w", err)
		}
		providers.Enrich(e, s, func(yield func(string, map[string]any) bool) {
			for _, r := range rootResources(st) {
				if r.Mode == tfjson.ManagedResourceMode && !yield(r.Type, r.AttributeValues) {
					return
				}
			}
		})
	}
	return s, nil
}

// rootResources are the resources of st's root module; none for an
// empty state.
func rootResources(st *tfjson.State) []*tfjson.StateResource {
	if st == nil || st.Values == nil || st.Values.RootModule == nil {
		return nil
	}
	return st.Values.RootModule.Resources
}

// writeServers creates or updates the node file of each server.
func (p *Project) writeServers(ctx context.Context, plat *nodes.Platform, provName string, servers []providers.Server, existing []*nodes.Node) ([]*nodes.Node, error) {
	all := slices.Clone(existing)
	var out []*nodes.Node
	for _, s := range servers {
		pool := plat.Pools[s.Pool]
		var cur *nodes.Node
		for _, n := range all {
			if (s.ServerID != "" && n.ProviderMetadata.ServerID == s.ServerID) || n.Hostname == s.Hostname {
				cur = n
				break
			}
		}
		zs := slices.Clone(pool.Zones)
		slices.Sort(zs)
		machine := s.Machine
		if machine == "" {
			machine = pool.Machine
		}
		fill := func(n *nodes.Node) error {
			before := n.Zones
			if len(zs) > 0 {
				n.Zones = zs
			}
			n.Machine = machine
			if s.PublicIP != "" {
				n.Network.PublicIP = s.PublicIP
			}
			if s.PrivateIP != "" {
				n.Network.PrivateIP = s.PrivateIP
			}
			if n.Network.PrivateIP == "" {
				ipp, err := PoolFor(plat, pool.IPPool)
				if err != nil {
					return err
				}
				got, err := ipp.Allocate(UsedPrivateIPs(all), 1)
				if err != nil {
					return fmt.Errorf("platform %s: %w", plat.Name, err)
				}
				n.Network.PrivateIP = got[0].String()
			}
			n.ProviderMetadata.Provider = provName
			n.ProviderMetadata.ServerID = s.ServerID
			n.ProviderMetadata.Zone = s.Zone
			if s.Region != "" {
				n.ProviderMetadata.Region = s.Region
			}
			if s.Datacenter != "" {
				n.ProviderMetadata.Datacenter = s.Datacenter
			}
			if s.OfferID != "" {
				n.ProviderMetadata.OfferID = s.OfferID
			}
			n.ProviderMetadata.Machine = machine
			if s.MAC != "" {
				n.Network.PrivateMAC = s.MAC
			}
			n.K8sLabels = zoneLabels(n.K8sLabels, before, n.Zones)
			return nil
		}
		var n *nodes.Node
		var err error
		if cur != nil {
			n, err = p.Store.UpdateNode(ctx, plat.Name, cur.Hostname, fill)
		} else {
			n = &nodes.Node{Hostname: s.Hostname, Platform: plat.Name}
			if err = fill(n); err == nil {
				err = p.Store.CreateNode(ctx, n)
			}
			all = append(all, n)
		}
		if err != nil {
			return out, fmt.Errorf("write node %s (server %s): %w", s.Hostname, s.ServerID, err)
		}
		if cur != nil && n == nil {
			n = cur
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b *nodes.Node) int { return strings.Compare(a.Hostname, b.Hostname) })
	return out, nil
}
