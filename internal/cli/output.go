package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// WriteData writes v to w as "json" (indented) or "yaml" (block style),
// with the names and the order of v's JSON encoding in both, so that the
// two outputs of a command always agree.
func WriteData(w io.Writer, format string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	switch format {
	case "json":
		_, err = w.Write(append(b, '\n'))
		return err
	case "yaml":
		// JSON is YAML: decoded into a node it keeps the keys' order,
		// which a map would lose.
		var n yaml.Node
		if err := yaml.Unmarshal(b, &n); err != nil {
			return err
		}
		plain(&n)
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(&n); err != nil {
			return err
		}
		_, err = w.Write(buf.Bytes())
		return err
	}
	return fmt.Errorf("output format %q: want json or yaml", format)
}

// plain drops the flow and quoting styles JSON's syntax gave n and its
// children; the encoder quotes what YAML 1.2 needs quoted, and the
// strings a YAML 1.1 reader takes for booleans stay quoted too.
func plain(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && isBool11(n.Value) {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		plain(c)
	}
}

// isBool11 reports whether s is one of YAML 1.1's words for a boolean.
func isBool11(s string) bool {
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "on", "off", "true", "false":
		return true
	}
	return false
}
