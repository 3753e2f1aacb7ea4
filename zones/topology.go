package zones

import (
	"cmp"
	"fmt"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// topologyFile is the name of the zone tree file at a project's root.
const topologyFile = "topology.yaml"

// maxTopologySize is the largest topology.yaml, in bytes, that
// ParseTopology and LoadTopology accept. Real trees are a few kilobytes.
const maxTopologySize = 1 << 20

// maxDepth is the largest number of segments of a zone path defined in
// topology.yaml, counting the platform root.
const maxDepth = 64

// maxNearest is how many known zones an unknown-zone error suggests.
const maxNearest = 5

// Topology is the set of zones defined by a topology.yaml. A nil *Topology
// stands for "no topology file": it defines no paths and accepts every valid
// zone.
type Topology struct {
	paths []string            // sorted, unique, every prefix included
	set   map[string]struct{} // the same paths
}

// LoadTopology reads and parses the topology file at path (usually
// <project>/topology.yaml, see topologyFile).
//
// When the file does not exist the error wraps [io/fs.ErrNotExist], so callers
// can branch with errors.Is and fall back to a nil *Topology (no
// constraint). Parse errors wrap [ErrInvalidTopology] and, like
// [ParseTopology], give line numbers.
func LoadTopology(path string) (*Topology, error) {
	f, err := regularfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load topology %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTopologySize+1))
	if err != nil {
		return nil, fmt.Errorf("load topology %s: %w", path, err)
	}
	t, err := ParseTopology(data)
	if err != nil {
		return nil, fmt.Errorf("load topology %s: %w", path, err)
	}
	return t, nil
}

// ParseTopology parses topology.yaml in the plasmactl-zone format: a map
// root, a map of layers under it, and under each layer a sequence whose
// items are scalars (leaf zones) or single-key maps holding nested
// sequences:
//
//	platform:
//	  foundation:
//	    - cluster:
//	      - control
//	      - nodes
//	  interaction:
//	    - observability
//
// It is tolerant of shape: anywhere a sequence is expected a map (keys are
// zones) or a lone scalar also works, a null value is a leaf, multi-key maps
// in sequences are accepted, and a root other than platform is taken to lie
// under platform, as [Normalize] does for paths. Every key and scalar must
// be one segment matching [a-z0-9_-]+; every prefix of a path is itself a
// zone.
//
// Only the first YAML document is read. Aliases (*name, including merge
// keys) are refused outright, so an alias-expansion ("billion laughs")
// document fails at once rather than consuming memory; so are documents
// larger than maxTopologySize and paths deeper than maxDepth. An empty
// document gives a Topology with no zones.
//
// Errors wrap [ErrInvalidTopology] and give the line number.
func ParseTopology(data []byte) (*Topology, error) {
	if len(data) > maxTopologySize {
		return nil, newError(ErrInvalidTopology, nil, fmt.Sprintf("parse topology: %d bytes is larger than the %d-byte limit", len(data), maxTopologySize))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, newError(ErrInvalidTopology, err, "parse topology")
	}
	b := &topologyBuilder{set: map[string]struct{}{}}
	for _, n := range doc.Content { // a DocumentNode has at most one child
		if err := b.walk(n, "", 0); err != nil {
			return nil, newError(ErrInvalidTopology, err, "parse topology")
		}
	}
	t := &Topology{set: b.set, paths: make([]string, 0, len(b.set))}
	for p := range b.set {
		t.paths = append(t.paths, p)
	}
	slices.Sort(t.paths)
	return t, nil
}

// topologyBuilder collects the paths of a topology tree.
type topologyBuilder struct {
	set map[string]struct{}
}

// walk records the zones under n. parent is the normalised path of the
// zone n lies under ("" at the root) and depth its number of segments.
func (b *topologyBuilder) walk(n *yaml.Node, parent string, depth int) error {
	switch n.Kind {
	case yaml.AliasNode:
		return fmt.Errorf("line %d: alias *%s is not allowed in %s (aliases are refused to keep parsing bounded)", n.Line, clip(n.Value), topologyFile)
	case yaml.ScalarNode:
		if isNull(n) {
			return nil
		}
		_, _, err := b.add(n, parent, depth)
		return err
	case yaml.SequenceNode:
		for _, item := range n.Content {
			if err := b.walk(item, parent, depth); err != nil {
				return err
			}
		}
		return nil
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.AliasNode {
				return b.walk(k, parent, depth)
			}
			if k.Kind != yaml.ScalarNode || isNull(k) {
				return fmt.Errorf("line %d: a zone name must be a plain scalar such as cluster", k.Line)
			}
			path, d, err := b.add(k, parent, depth)
			if err != nil {
				return err
			}
			if err := b.walk(v, path, d); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("line %d: unexpected YAML node kind %d", n.Line, n.Kind)
}

// add records the zone named by scalar n under parent (and, at the root,
// the platform root itself) and returns its path and depth.
func (b *topologyBuilder) add(n *yaml.Node, parent string, depth int) (string, int, error) {
	seg := n.Value
	if !validSegment(seg) {
		return "", 0, fmt.Errorf("line %d: zone name %q must be one segment matching %s", n.Line, clip(seg), segmentRule)
	}
	var path string
	switch {
	case parent != "":
		path, depth = parent+"."+seg, depth+1
	case seg == Root:
		path, depth = Root, 1
	default:
		b.set[Root] = struct{}{}
		path, depth = Root+"."+seg, 2
	}
	if depth > maxDepth {
		return "", 0, fmt.Errorf("line %d: zone name %q is at depth %d, deeper than the %d-segment limit", n.Line, seg, depth, maxDepth)
	}
	b.set[path] = struct{}{}
	return path, depth, nil
}

// isNull reports whether scalar n is YAML null (~, null or empty).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// Paths returns every zone the topology defines, including every prefix
// (platform, platform.foundation, platform.foundation.cluster, ...), sorted.
// A nil Topology returns nil. The slice is the caller's to keep.
func (t *Topology) Paths() []string {
	if t == nil {
		return nil
	}
	return slices.Clone(t.paths)
}

// Has reports whether zone, after [Normalize], is defined by the topology.
// An invalid zone is never defined. A nil Topology has every valid zone.
func (t *Topology) Has(zone string) bool {
	return t.Check(zone) == nil
}

// Check returns nil if zone is valid and, after [Normalize], defined by the
// topology. An invalid zone gives an error wrapping [ErrInvalidZone]. An
// unknown one gives an error wrapping [ErrUnknownZone] that lists up to
// five nearest known zones: those sharing the most leading segments with
// zone first, then by edit distance. A nil Topology accepts every valid
// zone (no topology file means no constraint).
func (t *Topology) Check(zone string) error {
	z, err := Normalize(zone)
	if err != nil {
		return err
	}
	if t == nil {
		return nil
	}
	if _, ok := t.set[z]; ok {
		return nil
	}
	near := t.nearest(z, maxNearest)
	if len(near) == 0 {
		return newError(ErrUnknownZone, nil, fmt.Sprintf("zone %q is not in %s; it defines no zones", z, topologyFile))
	}
	return newError(ErrUnknownZone, nil, fmt.Sprintf("zone %q is not in %s; nearest: %s", z, topologyFile, strings.Join(near, ", ")))
}

// nearest returns up to max known paths nearest to z: most common leading
// segments first, then smallest Levenshtein distance, then alphabetical.
func (t *Topology) nearest(z string, max int) []string {
	type cand struct {
		path   string
		common int
		dist   int
	}
	zs := strings.Split(z, ".")
	cands := make([]cand, 0, len(t.paths))
	for _, p := range t.paths {
		cands = append(cands, cand{path: p, common: commonSegments(zs, strings.Split(p, ".")), dist: levenshtein(z, p)})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if c := cmp.Compare(b.common, a.common); c != 0 {
			return c
		}
		if c := cmp.Compare(a.dist, b.dist); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	out := make([]string, 0, max)
	for i := 0; i < len(cands) && i < max; i++ {
		out = append(out, cands[i].path)
	}
	return out
}

// commonSegments counts the leading segments a and b share.
func commonSegments(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// levenshtein returns the edit distance between a and b, bytewise (zone
// paths are ASCII).
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// clip shortens s for an error message: a zone name copied from a file
// may be arbitrarily long.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
