package zones

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/internal/usage"
)

// ErrInvalidPlaybook means a layer playbook could not be parsed.
var ErrInvalidPlaybook = usage.New("invalid layer playbook")

// maxPlaybookSize is the largest layer playbook, in bytes, that
// ComponentZones reads.
const maxPlaybookSize = 4 << 20

// playbookPaths are the layer playbooks of a component, relative to the
// project root, in the order plasmactl-component's component:attach looks
// for them: src/<layer>/<layer>.yaml, then <layer>/<layer>.yaml, the layer
// being the component name's first segment. Nil for a name of fewer than
// two segments or with a segment that is not a zone segment.
func playbookPaths(component string) []string {
	segs := strings.Split(component, ".")
	if len(segs) < 2 || slices.ContainsFunc(segs, func(s string) bool { return !validSegment(s) }) {
		return nil
	}
	layer := segs[0]
	return []string{filepath.Join("src", layer, layer+".yaml"), filepath.Join(layer, layer+".yaml")}
}

// ComponentZones returns the zones a component is attached to in the
// project at root, as plasmactl-component's component:attach writes
// them: the layer playbook (playbookPaths, the first that exists) is a
// sequence of plays, and a play's hosts is a zone whose roles name the
// components attached to it, each a name or a map {role: NAME, vars}.
// The zones are sorted; none (and no error) when there is no playbook or
// the component is in none of its plays. A playbook that cannot be parsed
// is an error wrapping [ErrInvalidPlaybook] with its file and line.
func ComponentZones(root, component string) ([]string, error) {
	for _, rel := range playbookPaths(component) {
		path := filepath.Join(root, rel)
		f, err := regularfile.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("layer playbook %s: %w", path, err)
		}
		data, err := io.ReadAll(io.LimitReader(f, maxPlaybookSize+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("layer playbook %s: %w", path, err)
		}
		if len(data) > maxPlaybookSize {
			return nil, newError(ErrInvalidPlaybook, nil, fmt.Sprintf("layer playbook %s: larger than %d bytes", path, maxPlaybookSize))
		}
		zs, err := attachedZones(data, component)
		if err != nil {
			return nil, newError(ErrInvalidPlaybook, err, "layer playbook "+path)
		}
		return zs, nil
	}
	return nil, nil
}

// play is the part of an Ansible play a layer playbook's attachment
// uses.
type play struct {
	Hosts string      `yaml:"hosts"`
	Roles []yaml.Node `yaml:"roles"`
}

// attachedZones returns the hosts of the plays of data whose roles name
// component, normalised and sorted.
func attachedZones(data []byte, component string) ([]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	if hasAlias(&doc) {
		return nil, errors.New("aliases are not accepted")
	}
	var plays []play
	if err := doc.Content[0].Decode(&plays); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range plays {
		for _, r := range p.Roles {
			if roleName(&r) != component {
				continue
			}
			z, err := Normalize(p.Hosts)
			if err != nil {
				return nil, fmt.Errorf("line %d: hosts %q: %w", r.Line, p.Hosts, err)
			}
			out = append(out, z)
			break
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// roleName is a role entry's name: the scalar itself, or the map's role.
func roleName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "role" {
				return n.Content[i+1].Value
			}
		}
	}
	return ""
}

// hasAlias reports whether n holds an alias anywhere.
func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	return slices.ContainsFunc(n.Content, hasAlias)
}
