package zones

import (
	"fmt"
	"slices"
	"strings"
)

// OpKind is what an allocation operation does to a node's zone list.
type OpKind int

// The allocation operation kinds. The zero OpKind is not a valid kind.
const (
	// Add allocates the node to Op.Zone; written as the bare zone, X.
	Add OpKind = iota + 1
	// Remove deallocates the node from Op.Zone; written with a trailing
	// dash, X-.
	Remove
	// Replace swaps Op.Zone for Op.New; written old/new.
	Replace
)

// String returns "add", "remove" or "replace".
func (k OpKind) String() string {
	switch k {
	case Add:
		return "add"
	case Remove:
		return "remove"
	case Replace:
		return "replace"
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// Op is one kubectl-style allocation operation on a node's zone list, as
// given to `node:allocate <node> X Y- old/new`.
type Op struct {
	// Kind is Add, Remove or Replace.
	Kind OpKind
	// Zone is the zone added or removed, or for Replace the zone replaced.
	// ParseOp normalises it.
	Zone string
	// New is, for Replace only, the zone put in Zone's place.
	New string
}

// String returns the operation in the form ParseOp reads: X, X- or
// old/new.
func (o Op) String() string {
	switch o.Kind {
	case Remove:
		return o.Zone + "-"
	case Replace:
		return o.Zone + "/" + o.New
	}
	return o.Zone
}

// ParseOp parses one allocation operation, trimmed of surrounding space:
//
//   - old/new replaces old with new (split on the first '/');
//   - otherwise X- (a trailing dash) removes X;
//   - otherwise X adds X.
//
// Zones are normalised with [Normalize]. Because a trailing dash means
// remove, a zone whose last segment ends in '-' cannot be added with this
// syntax (X- removes X; X-- removes X-).
//
// Errors wrap [ErrInvalidOp], name the argument and say what is valid; a bad
// zone also wraps [ErrInvalidZone].
func ParseOp(s string) (Op, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Op{}, newError(ErrInvalidOp, nil, fmt.Sprintf("allocation op %q is empty; want X (add), X- (remove) or old/new (replace)", s))
	}
	if old, repl, ok := strings.Cut(t, "/"); ok {
		o, err := Normalize(old)
		if err != nil {
			return Op{}, newError(ErrInvalidOp, err, fmt.Sprintf("allocation op %q: replaced zone", s))
		}
		n, err := Normalize(repl)
		if err != nil {
			return Op{}, newError(ErrInvalidOp, err, fmt.Sprintf("allocation op %q: new zone", s))
		}
		return Op{Kind: Replace, Zone: o, New: n}, nil
	}
	if z, ok := strings.CutSuffix(t, "-"); ok {
		n, err := Normalize(z)
		if err != nil {
			return Op{}, newError(ErrInvalidOp, err, fmt.Sprintf("allocation op %q: removed zone", s))
		}
		return Op{Kind: Remove, Zone: n}, nil
	}
	n, err := Normalize(t)
	if err != nil {
		return Op{}, newError(ErrInvalidOp, err, fmt.Sprintf("allocation op %q", s))
	}
	return Op{Kind: Add, Zone: n}, nil
}

// ParseOps parses each argument with [ParseOp] and stops at the first bad
// one. An empty args gives no operations, which callers treat as "show
// the current allocations". Errors are as for ParseOp.
func ParseOps(args []string) ([]Op, error) {
	ops := make([]Op, 0, len(args))
	for _, a := range args {
		o, err := ParseOp(a)
		if err != nil {
			return nil, err
		}
		ops = append(ops, o)
	}
	return ops, nil
}

// Apply applies ops in order to a node's zone list current and returns the
// new list, sorted and without duplicates.
//
// Entries of current that are valid zones are normalised (so
// cognition.data and platform.cognition.data are the same zone); blank
// entries are dropped and invalid ones kept verbatim. The zones of ops are
// normalised too, so hand-built Ops work.
//
// Adding a zone the node already has is not an error. Removing or replacing
// a zone it does not have (at that point in the sequence) is an error
// wrapping [ErrNotAllocated] that names the zone and lists what the node
// has. An Op with an unknown Kind or an invalid zone is an error wrapping
// [ErrInvalidOp]. On error result is nil and changed false.
//
// changed reports whether result differs from current element by element,
// that is, whether writing result back would change the file: sorting,
// de-duplicating or normalising current alone counts as a change, while
// adding a zone already present to a sorted, normalised list does not.
//
// Apply never modifies current.
func Apply(current []string, ops []Op) (result []string, changed bool, err error) {
	set := make(map[string]struct{}, len(current)+len(ops))
	for _, c := range current {
		if strings.TrimSpace(c) == "" {
			continue
		}
		if n, err := Normalize(c); err == nil {
			c = n
		}
		set[c] = struct{}{}
	}
	for _, op := range ops {
		zone, err := Normalize(op.Zone)
		if err != nil {
			return nil, false, newError(ErrInvalidOp, err, fmt.Sprintf("apply %s %q", op.Kind, op.String()))
		}
		switch op.Kind {
		case Add:
			set[zone] = struct{}{}
		case Remove, Replace:
			var repl string
			if op.Kind == Replace {
				if repl, err = Normalize(op.New); err != nil {
					return nil, false, newError(ErrInvalidOp, err, fmt.Sprintf("apply %s %q: new zone", op.Kind, op.String()))
				}
			}
			if _, ok := set[zone]; !ok {
				return nil, false, newError(ErrNotAllocated, nil, fmt.Sprintf("%s %s: zone %q is not allocated to the node; %s", op.Kind, zone, zone, describe(set)))
			}
			delete(set, zone)
			if op.Kind == Replace {
				set[repl] = struct{}{}
			}
		default:
			return nil, false, newError(ErrInvalidOp, nil, fmt.Sprintf("apply %q: unknown op kind %d; want Add, Remove or Replace", op.String(), int(op.Kind)))
		}
	}
	result = make([]string, 0, len(set))
	for z := range set {
		result = append(result, z)
	}
	slices.Sort(result)
	return result, !slices.Equal(result, current), nil
}

// describe lists the zones in set for an error message.
func describe(set map[string]struct{}) string {
	if len(set) == 0 {
		return "the node has no zones"
	}
	zs := make([]string, 0, len(set))
	for z := range set {
		zs = append(zs, z)
	}
	slices.Sort(zs)
	return "the node has " + strings.Join(zs, ", ")
}
