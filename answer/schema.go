package answer

import "fmt"

// The answer file is declared once, as one table per TOML table (see
// schema_keys.go): a row per key with its name, its type and the model
// field it fills, the installer releases that know it, and its alias.
// Rendering (table.render), decoding (table.decode), the version rules
// (table.adapt) and the checks of each value (table.checkAll) walk these
// tables; the rules across keys (validate.go) name the keys they report.

// ValueType is the TOML type of an answer key's value.
type ValueType uint8

// Value types of answer keys.
const (
	// TypeString is a string; enumerations such as network.source are
	// strings too.
	TypeString ValueType = iota + 1
	// TypeBool is a boolean.
	TypeBool
	// TypeInteger is an integer.
	TypeInteger
	// TypeFloat is a number of GiB; an integer is read as a float.
	TypeFloat
	// TypeStringArray is an array of strings.
	TypeStringArray
	// TypeStringTable is a table of free-form keys to strings: udev
	// property names to globs, MAC addresses to interface names.
	TypeStringTable
	// TypeTable is a table of keys of the schema: a section such as
	// [global], or an options table such as disk-setup.zfs.
	TypeTable
	// TypeStringOrTable is a string, or a table of keys of the schema:
	// global.fqdn, a name or (8.4+) the table with source = "from-dhcp".
	TypeStringOrTable
)

// String names the type: "string", "boolean", "integer", "float", "array
// of strings", "table of strings", "table" or "string or table".
func (t ValueType) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeBool:
		return "boolean"
	case TypeInteger:
		return "integer"
	case TypeFloat:
		return "float"
	case TypeStringArray:
		return "array of strings"
	case TypeStringTable:
		return "table of strings"
	case TypeTable:
		return "table"
	case TypeStringOrTable:
		return "string or table"
	}
	return fmt.Sprintf("ValueType(%d)", uint8(t))
}

// Key is one key or table of the answer file, as [Schema] lists it.
type Key struct {
	// Path is the dotted path of the key in its canonical kebab-case
	// spelling: "disk-setup.zfs.arc-max".
	Path string
	// Type is the TOML type of the key's value.
	Type ValueType
	// First is the first installer release that knows the key.
	First Version
	// Last is the last installer release that knows the key; zero while
	// every release from First on knows it.
	Last Version
	// Alias is the other spelling of the key's name ("arc_max"), or empty.
	// A key with an alias that is older than kebab-case (8.4; 8.3 in
	// [first-boot]) is spelled only as its alias before then; from 8.4
	// installers accept both spellings and [Render] writes the canonical
	// one.
	Alias string
}

// Schema returns every key and table of the answer file, each table before
// its keys, in the order of the schema's tables ([Render] writes them in
// that order, a table's plain keys before its sub-tables). The free-form
// keys of udev filters and MAC mappings are not listed. The result is a
// copy.
func Schema() []Key {
	out := make([]Key, len(keyRules))
	for i, r := range keyRules {
		out[i] = Key{Path: r.path, Type: r.typ, First: r.since, Last: r.until, Alias: r.aliasName()}
	}
	return out
}

// table is the schema of one TOML table, filling a model struct S: the
// root (the sections), a section, or an options table.
type table[S any] struct {
	// kebab is the first release spelling this table's keys in
	// kebab-case; zero inherits the parent's. Before it, a key with an
	// alias is spelled as its alias only.
	kebab Version
	// rows are the keys, in the order Render writes them (go-toml puts a
	// table's plain keys before its sub-tables).
	rows []row[S]
	// adaptRule, when set, adapts the table to a version before its rows
	// are (see adapter), for rules across keys.
	adaptRule func(s *S, a *adapter)
	// rule, when set, checks rules across the keys after their own
	// checks.
	rule func(c *checker, s *S)

	// path and rules are compiled from the rows by compile: the table's
	// dotted path ("" for the root) and one rule per row.
	path  string
	rules []keyRule
}

// row is one key of a table.
type row[S any] struct {
	// key is the canonical (kebab-case) name of the key.
	key string
	// first is the first installer release knowing the key; last the last
	// one, zero for no last one.
	first, last Version
	// alias is the key's other spelling (see [Key.Alias]).
	alias string
	// val is the key's type, the model field it fills and the checks of
	// its value.
	val value[S]
	// dflt is the value, in render form (string, bool, int64, float64),
	// an installer assumes when the key is absent; nil for none. A key
	// unknown to a version but holding it is left out silently.
	dflt any
	// rule, when set, checks rules across the table's keys, reported
	// before the key's own checks.
	rule func(c *checker, s *S)
}

// value is a key's type bound to the field of the model struct S it fills.
type value[S any] interface {
	// typ is the key's TOML type; sub the table of a table value, nil for
	// others.
	typ() ValueType
	sub() schemaTable
	// field returns a pointer to the model field, for the schema tests
	// to find which field it is.
	field(s *S) any
	// isSet reports whether the field holds a value to write; clear
	// removes it; atDefault reports whether it holds dflt, the installer's
	// value when absent (for a table: whether the table can be left out
	// as holding only defaults).
	isSet(s *S) bool
	clear(s *S)
	atDefault(s *S, dflt any) bool
	// render returns the field in render form, false when absent.
	render(s *S, v Version) (any, bool)
	// decode reads the value x found for the key into s; absent handles
	// the key missing from the file.
	decode(s *S, x any, r *reader, k keyRule)
	absent(s *S, r *reader, k keyRule)
	// adapt adapts a set value known to the version (a table's keys).
	adapt(s *S, a *adapter)
	// check checks the value of the key at path.
	check(c *checker, path string, s *S)
}

// schemaTable is a table of any model type, as compile and the schema
// tests see it.
type schemaTable interface {
	// compile sets the table's path and rules and returns its rules and
	// those of its sub-tables, each table's before its keys.
	compile(path string, kebab Version) []keyRule
}

func (t *table[S]) compile(path string, kebab Version) []keyRule {
	if t.kebab != 0 {
		kebab = t.kebab
	}
	t.path = path
	t.rules = make([]keyRule, len(t.rows))
	var out []keyRule
	for i, r := range t.rows {
		k := newKeyRule(joinPath(path, r.key), r.alias, r.val.typ(), r.first, r.last, kebab)
		t.rules[i] = k
		out = append(out, k)
		if sub := r.val.sub(); sub != nil {
			out = append(out, sub.compile(k.path, kebab)...)
		}
	}
	return out
}

// joinPath appends a key to a dotted path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// render returns the table's keys set in s, named for installer v.
func (t *table[S]) render(s *S, v Version) tomlTable {
	var out tomlTable
	for i, r := range t.rows {
		if x, ok := r.val.render(s, v); ok {
			out = append(out, entry{t.rules[i].name(v), x})
		}
	}
	return out
}

// decode reads the table r holds into s, then reports the keys left over.
func (t *table[S]) decode(s *S, r *reader) {
	for i, row := range t.rows {
		k := t.rules[i]
		if x, ok := r.get(k); ok {
			row.val.decode(s, x, r, k)
		} else {
			row.val.absent(s, r, k)
		}
	}
	r.done()
}

// reader returns a reader for the table t holding m, at path.
func (t *table[S]) reader(d *decoder, m map[string]any) *reader {
	return &reader{d: d, path: t.path, rules: t.rules, m: m, used: map[string]bool{}}
}

// adapt leaves out of s, a private copy, what installer a.v does not
// know, by the rules of adapter.
func (t *table[S]) adapt(s *S, a *adapter) {
	if t.adaptRule != nil {
		t.adaptRule(s, a)
	}
	for i, r := range t.rows {
		k := t.rules[i]
		switch {
		case !r.val.isSet(s):
		case k.knownTo(a.v):
			r.val.adapt(s, a)
		case r.val.atDefault(s, r.dflt) || a.leaveOut(k):
			r.val.clear(s)
		}
	}
}

// checkAll checks every key of the table, then the table's rules.
func (t *table[S]) checkAll(c *checker, s *S) {
	for i, r := range t.rows {
		if r.rule != nil {
			r.rule(c, s)
		}
		r.val.check(c, t.rules[i].path, s)
	}
	if t.rule != nil {
		t.rule(c, s)
	}
}

// anySet reports whether any key of the table is set in s.
func (t *table[S]) anySet(s *S) bool {
	for _, r := range t.rows {
		if r.val.isSet(s) {
			return true
		}
	}
	return false
}

// onlyDefaults reports whether every key set in s holds its default.
func (t *table[S]) onlyDefaults(s *S) bool {
	for _, r := range t.rows {
		if r.val.isSet(s) && !r.val.atDefault(s, r.dflt) {
			return false
		}
	}
	return true
}
