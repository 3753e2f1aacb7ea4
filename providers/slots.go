package providers

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Slot is one server of a configuration, fresh or adopted, as [Slots]
// lays them out.
type Slot struct {
	// Pool is the pool name.
	Pool string
	// Index is the 0-based slot in the pool.
	Index int
	// Hostname is the node's hostname (Existing.Hostname, or
	// [Hostname]).
	Hostname string
	// Resource is the resource name, [ResourceName].
	Resource string
	// Machine is the pool's machine type.
	Machine string
	// ServerID is the import id of an adopted server; empty for a
	// server to create.
	ServerID string
}

// Adopted reports whether the slot adopts an existing server.
func (s Slot) Adopted() bool { return s.ServerID != "" }

var labelRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Hostname returns the generated hostname of slot index (0-based) of
// pool: <platform>-<pool>-<NNN>, NNN being index+1 as %03d.
func Hostname(platform, pool string, index int) string {
	return fmt.Sprintf("%s-%s-%03d", platform, pool, index+1)
}

// ResourceName returns the resource name of slot index (0-based) of
// pool: <platform>_<pool>_<NNN> with '-' replaced by '_'.
func ResourceName(platform, pool string, index int) string {
	return strings.ReplaceAll(Hostname(platform, pool, index), "-", "_")
}

// Slots lays out the servers of in, sorted by pool then index: every
// Existing server adopted in its slot, then, unless in.ImportOnly, fresh
// servers in the lowest free slots until the pool has Count. When a pool
// has more adopted servers than Count, those with the highest indexes are
// left out, so that a state holding them plans their deletion.
//
// Errors: [ErrInvalidInput] for no platform, a platform or pool name that
// is not an RFC 1123 label, a negative count, an adopted server of an
// unknown pool, with no server id, a negative index, or a pool slot or
// server id used twice, and a hostname that is not an RFC 1123 label.
func Slots(in Input) ([]Slot, error) {
	names, err := poolNames(in)
	if err != nil {
		return nil, err
	}
	byPool, err := existingByPool(in, names)
	if err != nil {
		return nil, err
	}
	var out []Slot
	hosts := map[string]bool{}
	for _, name := range names {
		slots, err := poolSlots(in, name, byPool[name])
		if err != nil {
			return nil, err
		}
		for _, s := range slots {
			if !labelRE.MatchString(s.Hostname) {
				return nil, fmt.Errorf("configure: hostname %q: %w: want an RFC 1123 label of at most 63 characters", s.Hostname, ErrInvalidInput)
			}
			if hosts[s.Hostname] {
				return nil, fmt.Errorf("configure: hostname %q: %w: used by two servers", s.Hostname, ErrInvalidInput)
			}
			hosts[s.Hostname] = true
			if !s.Adopted() && s.Machine == "" {
				return nil, fmt.Errorf("configure: pool %q: %w: no machine type to create servers with", name, ErrInvalidInput)
			}
		}
		out = append(out, slots...)
	}
	return out, nil
}

// poolNames checks the platform and pool names and counts of in and
// returns the pool names, sorted.
func poolNames(in Input) ([]string, error) {
	if in.Platform == nil {
		return nil, fmt.Errorf("configure: %w: no platform", ErrInvalidInput)
	}
	plat := in.Platform.Name
	if !labelRE.MatchString(plat) || (plat[0] >= '0' && plat[0] <= '9') {
		return nil, fmt.Errorf("configure: platform %q: %w: want an RFC 1123 label starting with a letter", plat, ErrInvalidInput)
	}
	names := make([]string, 0, len(in.Pools))
	for name, pool := range in.Pools {
		if !labelRE.MatchString(name) {
			return nil, fmt.Errorf("configure: pool %q: %w: want an RFC 1123 label (a-z, 0-9, '-')", name, ErrInvalidInput)
		}
		if pool.Count < 0 {
			return nil, fmt.Errorf("configure: pool %q: %w: count %d: want 0 or more", name, ErrInvalidInput, pool.Count)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// existingByPool checks the servers to adopt of in and groups them by
// pool; names are the pools, for messages.
func existingByPool(in Input, names []string) (map[string][]Existing, error) {
	byPool := map[string][]Existing{}
	ids := map[string]bool{}
	for _, e := range in.Existing {
		if _, ok := in.Pools[e.Pool]; !ok {
			return nil, fmt.Errorf("configure: server %q: %w: pool %q is not configured (known pools: %s)", e.ServerID, ErrInvalidInput, e.Pool, strings.Join(names, ", "))
		}
		if e.ServerID == "" {
			return nil, fmt.Errorf("configure: pool %q index %d: %w: empty server id", e.Pool, e.Index, ErrInvalidInput)
		}
		if e.Index < 0 {
			return nil, fmt.Errorf("configure: server %q: %w: index %d: want 0 or more", e.ServerID, ErrInvalidInput, e.Index)
		}
		if ids[e.ServerID] {
			return nil, fmt.Errorf("configure: server %q: %w: adopted twice", e.ServerID, ErrInvalidInput)
		}
		ids[e.ServerID] = true
		byPool[e.Pool] = append(byPool[e.Pool], e)
	}
	return byPool, nil
}

// poolSlots lays out pool name of in: the adopted servers ex in their
// slots (up to the pool's count, unless in.ImportOnly), then new servers
// in the lowest free slots up to the count, sorted by slot.
func poolSlots(in Input, name string, ex []Existing) ([]Slot, error) {
	plat, pool := in.Platform.Name, in.Pools[name]
	slices.SortFunc(ex, func(a, b Existing) int { return a.Index - b.Index })
	used := map[int]bool{}
	var slots []Slot
	for _, e := range ex {
		if used[e.Index] {
			return nil, fmt.Errorf("configure: server %q: %w: pool %q slot %d is taken by another server", e.ServerID, ErrInvalidInput, name, e.Index)
		}
		used[e.Index] = true
		if !in.ImportOnly && len(slots) >= pool.Count {
			continue
		}
		h := e.Hostname
		if h == "" {
			h = Hostname(plat, name, e.Index)
		}
		slots = append(slots, Slot{Pool: name, Index: e.Index, Hostname: h,
			Resource: ResourceName(plat, name, e.Index), Machine: pool.Machine, ServerID: e.ServerID})
	}
	if !in.ImportOnly {
		for i := 0; len(slots) < pool.Count; i++ {
			if used[i] {
				continue
			}
			used[i] = true
			slots = append(slots, Slot{Pool: name, Index: i, Hostname: Hostname(plat, name, i),
				Resource: ResourceName(plat, name, i), Machine: pool.Machine})
		}
	}
	slices.SortFunc(slots, func(a, b Slot) int { return a.Index - b.Index })
	return slots, nil
}

// Surplus returns the Existing servers of in that [Slots] leaves out
// because their pool has more adopted servers than its Count: in each
// pool, those beyond the first Count by slot index, so the
// highest-numbered slots go first. None when in.ImportOnly. It does not
// validate in; [Slots] does.
func Surplus(in Input) []Existing {
	if in.ImportOnly {
		return nil
	}
	byPool := map[string][]Existing{}
	for _, e := range in.Existing {
		byPool[e.Pool] = append(byPool[e.Pool], e)
	}
	var out []Existing
	for _, name := range slices.Sorted(maps.Keys(byPool)) {
		pool, ok := in.Pools[name]
		if !ok {
			continue
		}
		ex := byPool[name]
		slices.SortFunc(ex, func(a, b Existing) int { return a.Index - b.Index })
		if len(ex) > pool.Count {
			out = append(out, ex[max(pool.Count, 0):]...)
		}
	}
	return out
}
