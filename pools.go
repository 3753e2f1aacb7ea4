package plasmanode

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/zones"
)

// Pools and slots: specs become pools, and existing nodes are given the
// slots of their pools they are adopted into.

// poolEqual reports whether a and b are the same pool.
func poolEqual(a, b nodes.Pool) bool {
	return slices.Equal(a.Zones, b.Zones) && a.Machine == b.Machine && a.Count == b.Count && a.IPPool == b.IPPool &&
		slices.EqualFunc(a.Hardware, b.Hardware, func(x, y nodes.Machine) bool {
			return x.Pool == y.Pool && slices.Equal(x.MACs, y.MACs) && x.Serial == y.Serial && x.UUID == y.UUID &&
				x.BootDisk == y.BootDisk && slices.Equal(x.DataPools, y.DataPools) && x.ManagementMAC == y.ManagementMAC
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
	if isManual(plat) {
		return nil, fmt.Errorf("platform %s uses the manual provider: %w: nothing to %s", plat.Name, providers.ErrNoInfrastructure, op)
	}
	prov, err := p.providers.Get(name)
	if err != nil {
		return nil, fmt.Errorf("platform %s: %w", plat.Name, err)
	}
	if err := providers.ValidatePlatform(prov, plat); err != nil {
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

// PoolOf returns the name of the pool of plat whose zones are the zones
// of n, as sets (plasmactl-node's pool membership), or "" when none is
// or several are.
func PoolOf(plat *nodes.Platform, n *nodes.Node) string {
	found := ""
	for _, name := range slices.Sorted(maps.Keys(plat.Pools)) {
		if sameSet(plat.Pools[name].Zones, n.Zones) {
			if found != "" {
				return ""
			}
			found = name
		}
	}
	return found
}
