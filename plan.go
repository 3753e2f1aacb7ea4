package plasmanode

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// PlanAPIVersion is the apiVersion of every [Plan] document. A change
// that renames or removes a field, or changes a field's meaning, comes
// with a new version; new fields and new values of Action, Object and
// Source do not.
const PlanAPIVersion = "plasma-node/v1"

// PlanKind is the kind of every [Plan] document.
const PlanKind = "Plan"

// Operation names the operation a [Plan] is of.
type Operation string

// The operations that report a [Plan].
const (
	OpProvision Operation = "provision"
	OpJoin      Operation = "join"
	OpDelete    Operation = "delete"
	OpDestroy   Operation = "destroy"
	OpAdd       Operation = "add"
)

// PlanSource says where a [Plan]'s changes come from.
type PlanSource string

// The sources of a [Plan].
const (
	// SourceTofu: tofu's own plan, classified ([tofu.Classify]); it
	// needs the provider's credentials and its registry.
	SourceTofu PlanSource = "tofu"
	// SourceOffline: derived without tofu, credentials or network from
	// the pools (platform.yaml and the specs) and the node files, the
	// last known state; tofu's own plan may add updates the files do not
	// show.
	SourceOffline PlanSource = "offline"
	// SourceProvider: the plan of a provider that makes its servers
	// itself ([providers.Direct], pxe), from its own records.
	SourceProvider PlanSource = "provider"
	// SourceFiles: only the project's files change (add, a manual
	// platform, a node whose server stays).
	SourceFiles PlanSource = "files"
)

// Action is what a [PlanChange] does.
type Action string

// The actions of a [PlanChange].
const (
	// ActionCreate makes a new object.
	ActionCreate Action = "create"
	// ActionAdopt takes an existing server into tofu's state by its
	// server id (import), changing nothing of it.
	ActionAdopt Action = "adopt"
	// ActionUpdate changes an object in place, destroying nothing.
	ActionUpdate Action = "update"
	// ActionDestructiveUpdate changes in place an attribute that
	// reinstalls or wipes the server (Attributes name it).
	ActionDestructiveUpdate Action = "destructive-update"
	// ActionReplace destroys the object and makes it again.
	ActionReplace Action = "replace"
	// ActionDelete destroys the object (a server: destroyed, or
	// withdrawn for pxe; a node or platform file: removed).
	ActionDelete Action = "delete"
	// ActionForget drops the object from tofu's state, leaving it.
	ActionForget Action = "forget"
)

// Object names what a [PlanChange] acts on.
type Object string

// The objects of a [PlanChange].
const (
	// ObjectServer is a server or machine at the provider; its node
	// file follows it (written on create, removed on delete).
	ObjectServer Object = "server"
	// ObjectNode is a node file alone (nodes/<hostname>.yaml).
	ObjectNode Object = "node"
	// ObjectPool is a pool of platform.yaml (Pool names it).
	ObjectPool Object = "pool"
	// ObjectPlatform is a platform's platform.yaml.
	ObjectPlatform Object = "platform"
)

// Plan is what an operation would do or did, for people and programs
// alike: `-o json` prints it. Every operation fills the same model:
// provision from tofu's classified plan, from a [providers.Direct]
// provider's plan, or offline from the files; join, delete, destroy and
// add from theirs.
type Plan struct {
	// APIVersion is [PlanAPIVersion].
	APIVersion string `json:"apiVersion" yaml:"apiVersion"`
	// Kind is [PlanKind].
	Kind string `json:"kind" yaml:"kind"`
	// Operation is the operation planned.
	Operation Operation `json:"operation" yaml:"operation"`
	// Platform is the platform's name.
	Platform string `json:"platform" yaml:"platform"`
	// Provider is the platform's infrastructure.metal_provider.
	Provider string `json:"provider" yaml:"provider"`
	// Source says where the changes come from.
	Source PlanSource `json:"source" yaml:"source"`
	// DryRun reports that the operation stopped at the plan.
	DryRun bool `json:"dryRun" yaml:"dryRun"`
	// Applied reports that the changes were made.
	Applied bool `json:"applied" yaml:"applied"`
	// Declined reports that the person declined; nothing changed.
	Declined bool `json:"declined" yaml:"declined"`
	// Notes say what the plan does not show and why (tofu's own plan
	// needs credentials, a state kept in a backend was not read), one
	// sentence each.
	Notes []string `json:"notes" yaml:"notes"`
	// Changes are the changes, pools first, then servers and nodes by
	// hostname; none when nothing changes.
	Changes []PlanChange `json:"changes" yaml:"changes"`
}

// PlanChange is one change of a [Plan].
type PlanChange struct {
	// Action is what happens.
	Action Action `json:"action" yaml:"action"`
	// Object is what it happens to.
	Object Object `json:"object" yaml:"object"`
	// Node is the node's hostname; empty for a pool or platform.
	Node string `json:"node,omitempty" yaml:"node,omitempty"`
	// Pool is the pool the server or node is of, or the pool changed.
	Pool string `json:"pool,omitempty" yaml:"pool,omitempty"`
	// Machine is the machine type (the pool's for a new server).
	Machine string `json:"machine,omitempty" yaml:"machine,omitempty"`
	// ServerID is the provider's id of an existing server.
	ServerID string `json:"serverId,omitempty" yaml:"serverId,omitempty"`
	// Resource is tofu's resource address; tofu plans only.
	Resource string `json:"resource,omitempty" yaml:"resource,omitempty"`
	// Attributes are the attributes changed by an update or
	// replacement; for a destructive update, those that destroy.
	Attributes []string `json:"attributes,omitempty" yaml:"attributes,omitempty"`
	// Detail says more, for people: old and new values, a machine's
	// pins, why.
	Detail string `json:"detail,omitempty" yaml:"detail,omitempty"`
}

// newPlan returns an empty plan of op for plat.
func newPlan(op Operation, plat *nodes.Platform, src PlanSource) Plan {
	return Plan{APIVersion: PlanAPIVersion, Kind: PlanKind, Operation: op, Platform: plat.Name,
		Provider: providerName(plat), Source: src, Notes: []string{}, Changes: []PlanChange{}}
}

// providerName is plat's provider, "manual" when it names none.
func providerName(plat *nodes.Platform) string {
	if m := plat.Infrastructure.MetalProvider; m != "" {
		return m
	}
	return "manual"
}

// note adds a sentence to p's notes.
func (p *Plan) note(format string, args ...any) {
	p.Notes = append(p.Notes, fmt.Sprintf(format, args...))
}

// poolChanges are the pools of platform.yaml that pools create or
// change, by pool name.
func poolChanges(old, pools map[string]nodes.Pool) []PlanChange {
	var out []PlanChange
	for _, name := range slices.Sorted(maps.Keys(pools)) {
		nw := pools[name]
		was, ok := old[name]
		if !ok {
			out = append(out, PlanChange{Action: ActionCreate, Object: ObjectPool, Pool: name, Machine: nw.Machine,
				Detail: fmt.Sprintf("count %d, zones %s", nw.Count, strings.Join(nw.Zones, ","))})
			continue
		}
		var attrs, detail []string
		if was.Count != nw.Count {
			attrs, detail = append(attrs, "count"), append(detail, fmt.Sprintf("count %d -> %d", was.Count, nw.Count))
		}
		if was.Machine != nw.Machine {
			attrs, detail = append(attrs, "machine"), append(detail, fmt.Sprintf("machine %s -> %s", was.Machine, nw.Machine))
		}
		if !slices.Equal(was.Zones, nw.Zones) {
			attrs, detail = append(attrs, "zones"), append(detail, fmt.Sprintf("zones %s -> %s", strings.Join(was.Zones, ","), strings.Join(nw.Zones, ",")))
		}
		if len(attrs) > 0 {
			out = append(out, PlanChange{Action: ActionUpdate, Object: ObjectPool, Pool: name, Machine: nw.Machine, Attributes: attrs, Detail: strings.Join(detail, ", ")})
		}
	}
	return out
}

// offlinePlan is the provision plan of in derived from the files alone:
// each slot of the layout ([providers.Slots]) is an adoption of its
// node's server, or a server to create; a node whose machine type is not
// its pool's is an update; the surplus servers of a lowered count are
// deletes. Updates are planned only when updates is set (the provider's
// servers are tofu's, whose plan updates them).
func offlinePlan(in providers.Input, old map[string]nodes.Pool, existing []*nodes.Node, updates bool) (Plan, error) {
	pl := newPlan(OpProvision, in.Platform, SourceOffline)
	pl.DryRun = true
	slots, err := providers.Slots(in)
	if err != nil {
		return pl, err
	}
	byID := map[string]*nodes.Node{}
	for _, n := range existing {
		if id := n.ProviderMetadata.ServerID; id != "" {
			byID[id] = n
		}
	}
	pl.Changes = append(pl.Changes, poolChanges(old, in.Pools)...)
	var servers []PlanChange
	for _, s := range slots {
		c := PlanChange{Action: ActionCreate, Object: ObjectServer, Node: s.Hostname, Pool: s.Pool, Machine: s.Machine, ServerID: s.ServerID}
		if s.Adopted() {
			c.Action = ActionAdopt
			if n := byID[s.ServerID]; updates && n != nil && n.Machine != "" && n.Machine != s.Machine {
				servers = append(servers, c)
				c = PlanChange{Action: ActionUpdate, Object: ObjectServer, Node: s.Hostname, Pool: s.Pool, Machine: s.Machine, ServerID: s.ServerID,
					Attributes: []string{"machine"}, Detail: fmt.Sprintf("machine %s -> %s", n.Machine, s.Machine)}
			}
		}
		servers = append(servers, c)
	}
	for _, e := range providers.Surplus(in) {
		h := e.Hostname
		if h == "" {
			h = providers.Hostname(in.Platform.Name, e.Pool, e.Index)
		}
		servers = append(servers, PlanChange{Action: ActionDelete, Object: ObjectServer, Node: h, Pool: e.Pool, ServerID: e.ServerID,
			Detail: "beyond the pool's count"})
	}
	slices.SortStableFunc(servers, func(a, b PlanChange) int { return strings.Compare(a.Node, b.Node) })
	pl.Changes = append(pl.Changes, servers...)
	return pl, nil
}

// summaryPlan is the provision or join plan of a classified tofu (or
// [providers.Direct]) plan sum over the layout of in: each change is
// named by the node of its server id or of its resource.
func summaryPlan(op Operation, src PlanSource, sum tofu.Summary, in providers.Input, existing []*nodes.Node) Plan {
	pl := newPlan(op, in.Platform, src)
	byRes := map[string]providers.Slot{}
	if slots, err := providers.Slots(in); err == nil {
		for _, s := range slots {
			byRes[s.Resource] = s
			byRes[s.Hostname] = s
		}
	}
	byID := map[string]*nodes.Node{}
	for _, n := range existing {
		if id := n.ProviderMetadata.ServerID; id != "" {
			byID[id] = n
		}
	}
	var servers []PlanChange
	add := func(a Action, cs []tofu.Change) {
		for _, c := range cs {
			name, detail := resourceName(c.Address)
			pc := PlanChange{Action: a, Object: ObjectServer, Resource: c.Address, ServerID: c.ImportID, Detail: detail, Attributes: c.ChangedAttrs}
			if a == ActionDestructiveUpdate {
				pc.Attributes = c.DestructiveAttrs
			}
			if src != SourceTofu {
				pc.Resource = ""
			}
			if s, ok := byRes[name]; ok {
				pc.Node, pc.Pool, pc.Machine = s.Hostname, s.Pool, s.Machine
				if pc.ServerID == "" {
					pc.ServerID = s.ServerID
				}
			} else {
				pc.Node = strings.ReplaceAll(name, "_", "-")
			}
			if n := byID[c.ImportID]; n != nil && c.ImportID != "" {
				pc.Node = n.Hostname
			}
			servers = append(servers, pc)
		}
	}
	add(ActionAdopt, sum.Imports)
	add(ActionCreate, sum.Creates)
	add(ActionUpdate, sum.Updates)
	add(ActionDestructiveUpdate, sum.DestructiveUpdates)
	add(ActionReplace, sum.Replacements)
	add(ActionDelete, sum.Deletes)
	add(ActionForget, sum.Forgets)
	slices.SortStableFunc(servers, func(a, b PlanChange) int { return strings.Compare(a.Node, b.Node) })
	pl.Changes = append(pl.Changes, servers...)
	return pl
}

// resourceName is the name of a tofu address (hcloud_server.demo_web_001
// of `hcloud_server.demo_web_001`, its index dropped) and the note a
// [providers.Direct] provider puts after it in parentheses.
func resourceName(address string) (name, note string) {
	name, note, _ = strings.Cut(address, " (")
	note = strings.TrimSuffix(note, ")")
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	return name[strings.LastIndexByte(name, '.')+1:], note
}

// hostOf is the hostname of an adopted server: its node's, or the
// generated one of its slot.
func hostOf(platform string, e providers.Existing) string {
	if e.Hostname != "" {
		return e.Hostname
	}
	return providers.Hostname(platform, e.Pool, e.Index)
}

// lowerPool is the change of the pool whose count [Project.Delete]
// lowers by one.
func lowerPool(plat *nodes.Platform, pool string) PlanChange {
	n := plat.Pools[pool].Count
	return PlanChange{Action: ActionUpdate, Object: ObjectPool, Pool: pool, Machine: plat.Pools[pool].Machine,
		Attributes: []string{"count"}, Detail: fmt.Sprintf("count %d -> %d", n, max(n-1, 0))}
}

// raisePool is the change of the pool whose count [Project.Join] raises
// by one.
func raisePool(plat *nodes.Platform, pool string) PlanChange {
	n := plat.Pools[pool].Count
	return PlanChange{Action: ActionUpdate, Object: ObjectPool, Pool: pool, Machine: plat.Pools[pool].Machine,
		Attributes: []string{"count"}, Detail: fmt.Sprintf("count %d -> %d", n, n+1)}
}

// AddPlan is what add did as a [Plan]: plat's platform.yaml created
// (created), node n registered into plat (n not nil), or nothing (the
// platform existed with these settings).
func AddPlan(plat *nodes.Platform, created bool, n *nodes.Node) Plan {
	pl := newPlan(OpAdd, plat, SourceFiles)
	pl.Applied = created || n != nil
	switch {
	case n != nil:
		pl.Changes = append(pl.Changes, PlanChange{Action: ActionCreate, Object: ObjectNode, Node: n.Hostname,
			Detail: "private IP " + n.Network.PrivateIP})
	case created:
		pl.Changes = append(pl.Changes, PlanChange{Action: ActionCreate, Object: ObjectPlatform})
	}
	return pl
}
