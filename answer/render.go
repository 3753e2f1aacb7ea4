package answer

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	toml "github.com/pelletier/go-toml/v2"
)

// RenderOptions tunes [Render]. The zero value renders strictly, with no
// header.
type RenderOptions struct {
	// Header is written as "#" comment lines before the TOML, one per line
	// of Header. Empty writes none. It must be valid UTF-8 without control
	// characters other than line breaks.
	Header string
	// DropUnsupported leaves out keys and sections the installer version
	// does not know, logging each, instead of failing with an
	// [*UnsupportedError]. Keys that cannot be left out still fail: a hashed
	// root password with no plain one for 8.2, and fqdn from DHCP before
	// 8.4.
	DropUnsupported bool
	// Logger receives a warning for every key DropUnsupported leaves out
	// (key names and versions, never values). Nil discards.
	Logger *slog.Logger
	// Format is the file format: [FormatTOML] (the zero value) or
	// [FormatJSON], which only installers from 9.2 read (see
	// [Version.TakesJSON]); a JSON answer has no Header, JSON having no
	// comments.
	Format Format
}

// Render writes a as answer.toml for installer v: keys in snake_case
// before 8.4 (except inside [first-boot], kebab-case since it appeared in
// 8.3; [disk-setup] is always kebab-case), kebab-case from 8.4, and only
// keys v knows (see [Validate] for the rules and what happens to newer
// keys). Sections come in the order global, network, disk-setup,
// post-installation-webhook, first-boot; options tables (disk-setup.zfs,
// udev filters) become sub-tables. The output is deterministic.
//
// With opts.Format [FormatJSON] it writes the same keys as one JSON object
// instead (see [FormatJSON]).
//
// Render validates first: errors wrap [ErrInvalid] or [ErrUnsupported]
// (an [*UnsupportedError] for a key too new for v, or JSON for an
// installer before 9.2).
func Render(a *Answer, v Version, opts RenderOptions) ([]byte, error) {
	if opts.Format == FormatJSON {
		return renderJSON(a, v, opts)
	}
	var header []byte
	if opts.Header != "" {
		h, err := commentLines(opts.Header)
		if err != nil {
			return nil, fmt.Errorf("render answer for installer %s: %w", v, err)
		}
		header = h
	}
	b, err := prepare(a, v, opts)
	if err != nil {
		return nil, fmt.Errorf("render answer for installer %s: %w", v, err)
	}
	body, err := marshalTable(answerTable.render(b, v))
	if err != nil {
		return nil, fmt.Errorf("render answer for installer %s: %w", v, err)
	}
	if header == nil {
		return body, nil
	}
	return append(append(header, '\n'), body...), nil
}

// commentLines turns s into TOML comment lines.
func commentLines(s string) ([]byte, error) {
	var b bytes.Buffer
	for line := range strings.SplitSeq(strings.TrimRight(s, "\r\n"), "\n") {
		line = strings.TrimRight(line, "\r")
		if !utf8.ValidString(line) || strings.ContainsFunc(line, func(r rune) bool { return (r < 0x20 && r != '\t') || r == 0x7f }) {
			return nil, fmt.Errorf("%w: header: want UTF-8 text without control characters", ErrInvalid)
		}
		if line == "" {
			b.WriteString("#\n")
			continue
		}
		b.WriteString("# ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// tomlTable is an ordered TOML table; values are string, bool, int64,
// float64, []string, map[string]string or tomlTable.
type tomlTable []entry

// entry is one key of a table.
type entry struct {
	key   string
	value any
}

// marshalTable encodes an ordered table with go-toml. go-toml keeps the
// field order of structs (maps it sorts), so each table becomes a struct
// type built at run time, whose field tags are the keys. Free-form keys
// (udev filters, MAC mappings) stay maps, which go-toml quotes as needed.
func marshalTable(t tomlTable) ([]byte, error) {
	var buf bytes.Buffer
	enc := toml.NewEncoder(&buf)
	enc.SetIndentTables(false)
	if err := enc.Encode(structOf(t).Interface()); err != nil {
		return nil, fmt.Errorf("encode toml: %w", err)
	}
	return buf.Bytes(), nil
}

// structOf returns a struct value with one field per entry of t.
func structOf(t tomlTable) reflect.Value {
	fields := make([]reflect.StructField, len(t))
	values := make([]reflect.Value, len(t))
	for i, e := range t {
		rv := reflect.ValueOf(e.value)
		if sub, ok := e.value.(tomlTable); ok {
			rv = structOf(sub)
		}
		fields[i] = reflect.StructField{
			Name: "F" + strconv.Itoa(i),
			Type: rv.Type(),
			Tag:  reflect.StructTag("toml:" + strconv.Quote(e.key)),
		}
		values[i] = rv
	}
	s := reflect.New(reflect.StructOf(fields)).Elem()
	for i, rv := range values {
		s.Field(i).Set(rv)
	}
	return s
}

// Decode parses an answer.toml the way installer v does, into an Answer:
// the spellings v accepts (from 8.4 both kebab-case and the snake_case
// aliases; before, only the spelling of the time), and nothing else. It
// then validates the result like [Validate]. A missing network.source is
// from-dhcp before 9.2, as in the installer; a [global.fqdn] table without
// source is from DHCP (8.4+); RAID levels in upper case ("RAIDZ-1") are
// read in lower case from 8.3.3. An empty lvm table is read as absent
// (Render writes no empty table); an interface-name-pinning table without
// enabled is refused, as the installer refuses it.
//
// Errors wrap [ErrInvalid] (TOML syntax, an unknown key, a value of the
// wrong type, a rule broken, or both root passwords set, which the
// installer refuses) or [ErrUnsupported] (a key, or a spelling, newer than
// v, as an [*UnsupportedError]).
func Decode(data []byte, v Version) (*Answer, error) {
	if err := checkVersion(v); err != nil {
		return nil, fmt.Errorf("decode answer for installer %s: %w", v, err)
	}
	var m map[string]any
	if err := toml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode answer for installer %s: %w: %w", v, ErrInvalid, err)
	}
	return decodeMap(m, v)
}

// decodeMap reads the parsed file m (TOML's types: string, bool, int64,
// float64, []any, map[string]any) as installer v does, then validates it.
func decodeMap(m map[string]any, v Version) (*Answer, error) {
	d := &decoder{v: v}
	a := &Answer{}
	answerTable.decode(a, answerTable.reader(d, m))
	if err := errors.Join(d.errs...); err != nil {
		return nil, fmt.Errorf("decode answer for installer %s: %w", v, err)
	}
	if a.Global.RootPassword != "" && a.Global.RootPasswordHashed != "" {
		return nil, fmt.Errorf("decode answer for installer %s: %w: global: `global.root-password` and `global.root-password-hashed` cannot be set at the same time", v, ErrInvalid)
	}
	if err := Validate(a, v); err != nil {
		return nil, fmt.Errorf("decode answer for installer %s: %w", v, err)
	}
	return a, nil
}

// decoder reads the map go-toml made of an answer file.
type decoder struct {
	v    Version
	errs []error
}

// reader reads one table of the file.
type reader struct {
	d     *decoder
	path  string    // canonical path of the table, "" for the root
	rules []keyRule // the table's keys
	m     map[string]any
	used  map[string]bool
}

func (r *reader) bad(path, format string, args ...any) {
	r.d.errs = append(r.d.errs, fmt.Errorf("%w: %s: %s", ErrInvalid, path, fmt.Sprintf(format, args...)))
}

// get returns the value of key k under any spelling the version accepts.
func (r *reader) get(k keyRule) (any, bool) {
	var found []string
	for _, name := range k.accepts(r.d.v) {
		if _, ok := r.m[name]; ok {
			found = append(found, name)
			r.used[name] = true
		}
	}
	switch len(found) {
	case 0:
		return nil, false
	case 1:
		return r.m[found[0]], true
	}
	r.bad(k.path, "set twice, as %s", strings.Join(found, " and "))
	return nil, false
}

// typeName names the TOML type of a decoded value.
func typeName(x any) string {
	switch x.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case nil:
		return "null"
	}
	return "a date or time"
}

// convert turns the value x of the key at path into the render form of
// kind (see scalar), reporting a value of the wrong type.
func (r *reader) convert(kind ValueType, x any, path string) (any, bool) {
	switch kind {
	case TypeString:
		if s, ok := x.(string); ok {
			return s, true
		}
		r.bad(path, "want a string, got %s", typeName(x))
	case TypeBool:
		if b, ok := x.(bool); ok {
			return b, true
		}
		r.bad(path, "want a boolean, got %s", typeName(x))
	case TypeInteger:
		if i, ok := x.(int64); ok && i >= math.MinInt32 && i <= math.MaxInt32 {
			return i, true
		}
		r.bad(path, "want an integer, got %s", typeName(x))
	case TypeFloat:
		switch n := x.(type) {
		case float64:
			return n, true
		case int64:
			return float64(n), true
		}
		r.bad(path, "want a number, got %s", typeName(x))
	case TypeStringArray:
		return r.stringArray(x, path)
	case TypeStringTable:
		return r.stringTable(x, path)
	}
	return nil, false
}

// stringArray reads an array of strings.
func (r *reader) stringArray(x any, path string) (any, bool) {
	list, ok := x.([]any)
	if !ok {
		r.bad(path, "want an array of strings, got %s", typeName(x))
		return nil, false
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			r.bad(fmt.Sprintf("%s[%d]", path, i), "want a string, got %s", typeName(e))
			continue
		}
		out = append(out, s)
	}
	return out, true
}

// stringTable reads a table of free-form keys to strings.
func (r *reader) stringTable(x any, path string) (any, bool) {
	t, ok := x.(map[string]any)
	if !ok {
		r.bad(path, "want a table of strings, got %s", typeName(x))
		return nil, false
	}
	out := make(map[string]string, len(t))
	for _, k := range slices.Sorted(maps.Keys(t)) {
		s, ok := t[k].(string)
		if !ok {
			r.bad(fmt.Sprintf("%s.%q", path, k), "want a string, got %s", typeName(t[k]))
			continue
		}
		out[k] = s
	}
	return out, true
}

// done reports the keys of the table nothing read: a spelling of another
// version is unsupported, anything else unknown.
func (r *reader) done() {
	for _, k := range slices.Sorted(maps.Keys(r.m)) {
		if r.used[k] {
			continue
		}
		var unsupported *UnsupportedError
		for _, kr := range r.rules {
			for _, s := range kr.names {
				if s.name == k && !slices.Contains(kr.accepts(r.d.v), k) {
					unsupported = kr.unsupported(k, s.since, r.d.v)
				}
			}
		}
		if unsupported != nil {
			r.d.errs = append(r.d.errs, unsupported)
			continue
		}
		r.bad(joinPath(r.path, k), "unknown key")
	}
}

// lowerMACKeys writes the MAC keys of a mapping in lower case, as the
// installer reads them (and Render writes them). A mapping where that would
// merge two keys is returned unchanged, for Validate to report.
func lowerMACKeys(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if c, ok := canonicalMAC(k); ok {
			k = c
		}
		if _, dup := out[k]; dup {
			return m
		}
		out[k] = v
	}
	return out
}
