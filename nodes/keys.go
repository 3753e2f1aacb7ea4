package nodes

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// UnknownKey is a key of platform.yaml, inside a section plasma-node
// owns (infrastructure, dns, networking, pools, ...), that no setting
// has: most likely a misspelling, which would otherwise be ignored.
// Unknown top-level sections are not reported: other plasmactl plugins
// own them.
type UnknownKey struct {
	// File is the platform.yaml's path, as the store names it.
	File string `json:"file" yaml:"file"`
	// Line is the key's line, counted from 1.
	Line int `json:"line" yaml:"line"`
	// Key is the key's dotted path, as dns.domian or pools.web.cout.
	Key string `json:"key" yaml:"key"`
	// Nearest is the valid key nearest to it, dotted the same way; empty
	// when none is close.
	Nearest string `json:"nearest,omitempty" yaml:"nearest,omitempty"`
}

// String says where the key is and what it probably should be.
func (u UnknownKey) String() string {
	s := fmt.Sprintf("%s:%d: unknown key %s", u.File, u.Line, u.Key)
	if u.Nearest != "" {
		s += " (did you mean " + u.Nearest + "?)"
	}
	return s
}

// notModelled are keys plasmactl's platform schema has that this
// package does not read; they are valid, and what is below them is not
// checked.
var notModelled = map[string]bool{"networking.bus": true}

// unknownKeys returns the keys of body, a platform.yaml's top mapping,
// that no field of [Platform] has, below its top-level sections, and the
// top-level keys that are near misses of a section of its own.
func unknownKeys(file string, body *yaml.Node) []UnknownKey {
	var out []UnknownKey
	t := reflect.TypeFor[Platform]()
	for i := 0; i+1 < len(body.Content); i += 2 {
		k, v := body.Content[i], body.Content[i+1]
		if f, ok := fieldOf(t, k.Value); ok {
			out = append(out, walkKeys(file, k.Value, v, f.Type)...)
			continue
		}
		// Other plugins keep sections of their own at the top; a key a
		// few edits from one of plasma-node's (poolz, infrastucture) is a
		// misspelt setting, not another plugin's.
		if near := strings.TrimPrefix(nearestKey("", k.Value, t), "."); near != "" && editDistance(k.Value, near) <= 2 {
			out = append(out, UnknownKey{File: file, Line: k.Line, Key: k.Value, Nearest: near})
		}
	}
	return out
}

// walkKeys checks the mapping n against type t, the value at path.
func walkKeys(file, path string, n *yaml.Node, t reflect.Type) []UnknownKey {
	if notModelled[path] {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []UnknownKey
	switch {
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, walkKeys(file, path+"."+n.Content[i].Value, n.Content[i+1], t.Elem())...)
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, item := range n.Content {
			out = append(out, walkKeys(file, fmt.Sprintf("%s[%d]", path, i), item, t.Elem())...)
		}
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode && !t.Implements(unmarshalerType) && !reflect.PointerTo(t).Implements(unmarshalerType):
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fieldOf(t, k.Value)
			if !ok {
				if !notModelled[path+"."+k.Value] {
					out = append(out, UnknownKey{File: file, Line: k.Line, Key: path + "." + k.Value, Nearest: nearestKey(path, k.Value, t)})
				}
				continue
			}
			out = append(out, walkKeys(file, path+"."+k.Value, v, f.Type)...)
		}
	}
	return out
}

// unmarshalerType is yaml.Unmarshaler: a type decoding itself (State)
// checks its own keys.
var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// fieldOf returns the field of struct t whose yaml key is key.
func fieldOf(t reflect.Type, key string) (reflect.StructField, bool) {
	for _, f := range reflect.VisibleFields(t) {
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name == key && f.IsExported() {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// nearestKey returns path.<the key of t nearest to key>, or "" when
// none is within a third of its length in edits (at least 2).
func nearestKey(path, key string, t reflect.Type) string {
	best, bestD := "", max(2, len(key)/3)+1
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" && f.IsExported() {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if d := editDistance(key, name); d < bestD {
			best, bestD = name, d
		}
	}
	if best == "" {
		return ""
	}
	return path + "." + best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
