package nodes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/plasmactl/plasma-node/internal/usage"
)

// Limits on what a node or platform file may hold.
const (
	// maxFileSize is the largest node or platform file the Store reads.
	maxFileSize = 1 << 20
	// maxNodes caps the number of YAML nodes a document may expand to,
	// aliases counted at every use, which stops alias bombs.
	maxNodes = 100_000
)

// ErrMalformed is wrapped by the errors for a node or platform file that is
// not valid YAML or does not fit the schema. The message names the file
// and, where yaml.v3 reports one, the line.
var ErrMalformed = usage.New("malformed file")

// document is a YAML file as a node tree, so that a rewrite can keep what
// a person wrote.
type document struct {
	root *yaml.Node // the DocumentNode; nil for an empty file
}

// lines returns the line of the value of every key of the document's
// nested mappings, by dotted path ("infrastructure.zone").
func (d *document) lines() map[string]int {
	out := map[string]int{}
	if d == nil || d.root == nil || len(d.root.Content) == 0 {
		return out
	}
	var walk func(prefix string, m *yaml.Node)
	walk = func(prefix string, m *yaml.Node) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			path := prefix + k.Value
			out[path] = v.Line
			if v.Kind == yaml.MappingNode {
				walk(path+".", v)
			}
		}
	}
	if body := d.root.Content[0]; body.Kind == yaml.MappingNode {
		walk("", body)
	}
	return out
}

// parseDocument parses data into a tree and decodes it into v. Unknown
// fields are allowed; wrong types and syntax errors are not.
func parseDocument(file string, data []byte, v any) (*document, error) {
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", file, ErrMalformed, maxFileSize)
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return &document{}, nil
		}
		return nil, fmt.Errorf("%s: %w: %v", file, ErrMalformed, parserLine(err, data))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("%s: %w: line %d: a second YAML document; want one", file, ErrMalformed, extra.Line)
	}
	if n := countExpanded(&root, maxNodes+1); n > maxNodes {
		return nil, fmt.Errorf("%s: %w: aliases expand to more than %d nodes", file, ErrMalformed, maxNodes)
	}
	body := root.Content[0]
	if body.Kind == yaml.ScalarNode && body.Tag == "!!null" {
		return &document{}, nil
	}
	if body.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: %w: line %d: want a mapping of fields, got %s", file, ErrMalformed, body.Line, kindName(body))
	}
	if err := body.Decode(v); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", file, ErrMalformed, err)
	}
	return &document{root: &root}, nil
}

// parserErr matches yaml.v3's parser errors, whose line is the 0-based
// line of the token after the fault (its scanner errors count from 1).
var parserErr = regexp.MustCompile(`^yaml: line (\d+): (did not find expected (?:node content|key|'-' indicator|',' or '\]'|',' or '\}'|<document start>))$`)

// parserLine returns err with the line of a parser error counted from 1
// and kept within data, so that it names the offending line.
func parserLine(err error, data []byte) string {
	m := parserErr.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	line, _ := strconv.Atoi(m[1])
	line = min(line+1, max(1, bytes.Count(bytes.TrimRight(data, "\n"), []byte("\n"))+1))
	return fmt.Sprintf("yaml: line %d: %s", line, m[2])
}

// countExpanded counts the nodes of the tree with every alias expanded,
// stopping once limit is reached.
func countExpanded(n *yaml.Node, limit int) int {
	seen := 0
	var walk func(*yaml.Node, int)
	walk = func(n *yaml.Node, depth int) {
		if n == nil || seen >= limit {
			return
		}
		seen++
		if depth > 1000 {
			seen = limit
			return
		}
		if n.Kind == yaml.AliasNode {
			walk(n.Alias, depth+1)
			return
		}
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return seen
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "something else"
}

// encode renders v as a YAML mapping node.
func encodeNode(v any) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	return &n, nil
}

// update returns the file's new bytes after the value decoded from it
// changed from old to cur. Keys whose values did not change are left as
// written, with their comments and style; keys the struct does not know are
// kept; known keys that became empty are dropped; new keys are appended.
func (d *document) update(old, cur any) ([]byte, error) {
	oldN, err := encodeNode(old)
	if err != nil {
		return nil, err
	}
	curN, err := encodeNode(cur)
	if err != nil {
		return nil, err
	}
	if d.root == nil {
		return marshal(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{curN}})
	}
	merged := mergeMapping(d.root.Content[0], oldN, curN)
	d.root.Content[0] = merged
	resolveAliases(d.root, map[string]*yaml.Node{})
	spellNulls(d.root, false)
	return marshal(d.root)
}

// spellNulls writes "~" for the empty nulls yaml.v3 would otherwise emit
// as a quoted empty string: mapping keys, and values in flow collections.
// Empty nulls elsewhere ("key:") are left as written.
func spellNulls(n *yaml.Node, flow bool) {
	flow = flow || n.Style&yaml.FlowStyle != 0
	for i, c := range n.Content {
		isKey := n.Kind == yaml.MappingNode && i%2 == 0
		if c.Kind == yaml.ScalarNode && c.Tag == "!!null" && c.Value == "" && (isKey || flow) {
			c.Value = "~"
		}
		spellNulls(c, flow)
	}
}

// resolveAliases replaces each alias whose anchored value is no longer in
// the tree (it was rewritten) by a copy of the value it stood for, so the
// output names no undefined anchor and the alias keeps its meaning.
// defined maps each anchor seen so far, in document order, to its node.
func resolveAliases(n *yaml.Node, defined map[string]*yaml.Node) {
	if n.Anchor != "" {
		defined[n.Anchor] = n
	}
	for i, c := range n.Content {
		if c.Kind == yaml.AliasNode && c.Alias != nil && defined[c.Value] != c.Alias {
			c = copyWithoutAnchors(c.Alias)
			n.Content[i] = c
		}
		resolveAliases(c, defined)
	}
}

// copyWithoutAnchors returns a deep copy of n with its anchors removed;
// aliases inside are kept for resolveAliases to check.
func copyWithoutAnchors(n *yaml.Node) *yaml.Node {
	c := *n
	c.Anchor = ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = copyWithoutAnchors(k)
	}
	return &c
}

func marshal(n *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// mergeMapping applies the difference between old and cur (both encoded
// from structs) to orig, the mapping as the person wrote it.
func mergeMapping(orig, old, cur *yaml.Node) *yaml.Node {
	if orig.Kind == yaml.AliasNode || orig.Kind != yaml.MappingNode || cur.Kind != yaml.MappingNode {
		return replaceValue(orig, cur)
	}
	oldVals := pairs(old)
	curVals := pairs(cur)
	var content []*yaml.Node
	present := map[string]bool{}
	for i := 0; i+1 < len(orig.Content); i += 2 {
		k, v := orig.Content[i], orig.Content[i+1]
		present[k.Value] = true
		c, inCur := curVals[k.Value]
		o, inOld := oldVals[k.Value]
		switch {
		case inCur && inOld && equalNodes(o, c):
			// Unchanged: keep as written.
		case inCur && inOld:
			v = mergeValue(v, o, c)
		case inCur:
			// Written but empty in the struct before (e.g. public_ip: ""),
			// now set.
			v = mergeValue(v, &yaml.Node{}, c)
		case inOld:
			// The struct dropped it (now empty): drop the key.
			continue
		}
		content = append(content, k, v)
	}
	for i := 0; i+1 < len(cur.Content); i += 2 {
		k := cur.Content[i]
		if !present[k.Value] {
			content = append(content, k, cur.Content[i+1])
		}
	}
	out := *orig
	out.Content = content
	return &out
}

func mergeValue(orig, old, cur *yaml.Node) *yaml.Node {
	if orig.Kind == yaml.MappingNode && cur.Kind == yaml.MappingNode {
		return mergeMapping(orig, old, cur)
	}
	return replaceValue(orig, cur)
}

// replaceValue puts cur's value in place of orig, keeping orig's comments
// and, for lists, its flow or block style.
func replaceValue(orig, cur *yaml.Node) *yaml.Node {
	out := *cur
	out.HeadComment, out.LineComment, out.FootComment = orig.HeadComment, orig.LineComment, orig.FootComment
	if orig.Kind == cur.Kind && (cur.Kind == yaml.SequenceNode || cur.Kind == yaml.MappingNode) {
		out.Style = orig.Style
		if cur.Kind == yaml.SequenceNode {
			out.Content = keepItemComments(orig.Content, cur.Content)
		}
	}
	return &out
}

// keepItemComments carries the comments of list items that stay in the
// list over to the new list.
func keepItemComments(orig, cur []*yaml.Node) []*yaml.Node {
	byValue := map[string]*yaml.Node{}
	for _, n := range orig {
		if n.Kind == yaml.ScalarNode {
			byValue[n.Value] = n
		}
	}
	out := make([]*yaml.Node, len(cur))
	for i, n := range cur {
		if o, ok := byValue[n.Value]; ok && n.Kind == yaml.ScalarNode {
			c := *n
			c.HeadComment, c.LineComment, c.FootComment = o.HeadComment, o.LineComment, o.FootComment
			c.Style = o.Style
			n = &c
		}
		out[i] = n
	}
	return out
}

func pairs(m *yaml.Node) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if m == nil || m.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		out[m.Content[i].Value] = m.Content[i+1]
	}
	return out
}

// equalNodes compares two encoded values by what they mean.
func equalNodes(a, b *yaml.Node) bool {
	var x, y any
	if a.Decode(&x) != nil || b.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
