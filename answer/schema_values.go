package answer

import (
	"slices"
	"strings"
)

// The kinds of value a row of the schema can hold, each bound to a field
// of the model through an accessor: a function from the model struct to a
// pointer to the field, so that a row naming a field that does not exist,
// or of the wrong type, does not compile.

// scalar is a key holding a string, a boolean, a number, an array of
// strings or a table of free-form strings. Values are passed in render
// form: string, bool, int64, float64, []string, map[string]string.
type scalar[S any] struct {
	kind ValueType
	ptr  func(s *S) any
	// get returns the field in render form, false when it is unset; set
	// stores a value in render form, nil clearing the field.
	get func(s *S) (any, bool)
	set func(s *S, x any)
	// checks checks the field's value.
	checks func(c *checker, path string, s *S)
	// implied, when set, is the value installers up to impliedLast read
	// for the key when it is absent or empty; Decode fills it in.
	implied     any
	impliedLast Version
	// needed makes Decode refuse a table holding the key's table without
	// the key, as the installer does for a field without a default.
	needed bool
	// upper, when set, is the first release reading the values upperOf
	// also in upper case; Decode stores them in lower case.
	upper   Version
	upperOf []string
}

func (v *scalar[S]) typ() ValueType   { return v.kind }
func (v *scalar[S]) sub() schemaTable { return nil }
func (v *scalar[S]) field(s *S) any   { return v.ptr(s) }
func (v *scalar[S]) clear(s *S)       { v.set(s, nil) }
func (v *scalar[S]) adapt(*S, *adapter) {
}

func (v *scalar[S]) isSet(s *S) bool {
	_, ok := v.get(s)
	return ok
}

// atDefault compares render forms; the schema tests make sure a default
// is only given to strings, booleans and numbers.
func (v *scalar[S]) atDefault(s *S, dflt any) bool {
	x, ok := v.get(s)
	return ok && dflt != nil && x == dflt
}

func (v *scalar[S]) render(s *S, _ Version) (any, bool) { return v.get(s) }

func (v *scalar[S]) decode(s *S, x any, r *reader, k keyRule) {
	if y, ok := r.convert(v.kind, x, k.path); ok {
		v.set(s, v.lower(y, r.d.v))
	}
	v.imply(s, r)
}

// lower returns the lower-case spelling of a value installer ver reads in
// upper case too (see upperSince), else x.
func (v *scalar[S]) lower(x any, ver Version) any {
	str, ok := x.(string)
	if !ok || v.upper == 0 || ver < v.upper {
		return x
	}
	if l := strings.ToLower(str); slices.Contains(v.upperOf, l) && str == strings.ToUpper(l) {
		return l
	}
	return x
}

func (v *scalar[S]) absent(s *S, r *reader, k keyRule) {
	if v.needed && k.knownTo(r.d.v) {
		r.bad(k.path, "required: the installer refuses the table without it (missing field `%s`)", lastElem(k.path))
	}
	v.imply(s, r)
}

func (v *scalar[S]) imply(s *S, r *reader) {
	if v.implied != nil && !v.isSet(s) && r.d.v <= v.impliedLast {
		v.set(s, v.implied)
	}
}

func (v *scalar[S]) check(c *checker, path string, s *S) {
	if v.checks != nil {
		v.checks(c, path, s)
	}
}

// impliedUntil makes Decode read the key as x, when it is absent or empty,
// for installers up to last.
func (v *scalar[S]) impliedUntil(last Version, x string) *scalar[S] {
	v.implied, v.impliedLast = x, last
	return v
}

// required makes Decode refuse the key's table without the key (see
// needed).
func (v *scalar[S]) required() *scalar[S] {
	v.needed = true
	return v
}

// upperSince makes Decode read the values in upper case too ("RAID1",
// "RAIDZ-1") for installers from since on, storing them in lower case, the
// only spelling Render writes (older installers read nothing else).
func upperSince[S any, T ~string](v *scalar[S], since Version, values ...T) *scalar[S] {
	v.upper = since
	for _, x := range values {
		v.upperOf = append(v.upperOf, string(x))
	}
	return v
}

// textCheck checks a string value at path. It returns false to skip the
// checks after it (the value is missing or not text).
type textCheck func(c *checker, path, s string) bool

// text is a string key, or an enumeration of strings (type T).
func text[S any, T ~string](at func(*S) *T, checks ...textCheck) *scalar[S] {
	return &scalar[S]{
		kind: TypeString,
		ptr:  func(s *S) any { return at(s) },
		get: func(s *S) (any, bool) {
			x := string(*at(s))
			return x, x != ""
		},
		set: func(s *S, x any) {
			y, _ := x.(string)
			*at(s) = T(y)
		},
		checks: func(c *checker, path string, s *S) {
			x := string(*at(s))
			for _, check := range checks {
				if !check(c, path, x) {
					return
				}
			}
		},
	}
}

// boolean is a boolean key; nil leaves it out.
func boolean[S any](at func(*S) **bool) *scalar[S] {
	return optional(TypeBool, at)
}

// integer is an integer key; nil leaves it out.
func integer[S any](at func(*S) **int, checks ...func(c *checker, path string, p *int)) *scalar[S] {
	return &scalar[S]{
		kind: TypeInteger,
		ptr:  func(s *S) any { return at(s) },
		get: func(s *S) (any, bool) {
			if p := *at(s); p != nil {
				return int64(*p), true
			}
			return nil, false
		},
		set: func(s *S, x any) {
			if i, ok := x.(int64); ok {
				n := int(i)
				*at(s) = &n
				return
			}
			*at(s) = nil
		},
		checks: each(at, checks),
	}
}

// number is a key holding a number of GiB; nil leaves it out.
func number[S any](at func(*S) **float64, checks ...func(c *checker, path string, p *float64)) *scalar[S] {
	return optional(TypeFloat, at, checks...)
}

// optional is a key held in a pointer field whose render form is the
// value pointed to; nil leaves it out.
func optional[S any, T bool | float64](kind ValueType, at func(*S) **T, checks ...func(c *checker, path string, p *T)) *scalar[S] {
	return &scalar[S]{
		kind: kind,
		ptr:  func(s *S) any { return at(s) },
		get: func(s *S) (any, bool) {
			if p := *at(s); p != nil {
				return *p, true
			}
			return nil, false
		},
		set: func(s *S, x any) {
			if y, ok := x.(T); ok {
				*at(s) = &y
				return
			}
			*at(s) = nil
		},
		checks: each(at, checks),
	}
}

// each runs checks, in order, on the field at points to.
func each[S, V any](at func(*S) *V, checks []func(c *checker, path string, v V)) func(c *checker, path string, s *S) {
	return func(c *checker, path string, s *S) {
		for _, check := range checks {
			check(c, path, *at(s))
		}
	}
}

// list is a key holding an array of strings; an empty one leaves it out.
func list[S any](at func(*S) *[]string, checks ...func(c *checker, path string, l []string)) *scalar[S] {
	return &scalar[S]{
		kind: TypeStringArray,
		ptr:  func(s *S) any { return at(s) },
		get: func(s *S) (any, bool) {
			l := *at(s)
			return l, len(l) > 0
		},
		set: func(s *S, x any) {
			l, _ := x.([]string)
			if len(l) == 0 {
				l = nil // an empty array is left out when rendered
			}
			*at(s) = l
		},
		checks: each(at, checks),
	}
}

// dict is a key holding a table of free-form keys to strings (udev
// filters); an empty one leaves it out.
func dict[S any](at func(*S) *map[string]string, checks ...func(c *checker, path string, m map[string]string)) *scalar[S] {
	return &scalar[S]{
		kind: TypeStringTable,
		ptr:  func(s *S) any { return at(s) },
		get: func(s *S) (any, bool) {
			m := *at(s)
			return m, len(m) > 0
		},
		set: func(s *S, x any) {
			m, _ := x.(map[string]string)
			if len(m) == 0 {
				m = nil // an empty table is left out when rendered
			}
			*at(s) = m
		},
		checks: each(at, checks),
	}
}

// macDict is a dict keyed by MAC address, written in lower case with
// colons and read in lower case, as the installer reads it.
func macDict[S any](at func(*S) *map[string]string, checks ...func(c *checker, path string, m map[string]string)) *scalar[S] {
	v := dict(at, checks...)
	v.get = func(s *S) (any, bool) {
		m := *at(s)
		out := make(map[string]string, len(m))
		for mac, name := range m {
			c, _ := canonicalMAC(mac)
			out[c] = name
		}
		return out, len(out) > 0
	}
	v.set = func(s *S, x any) {
		m, _ := x.(map[string]string)
		if len(m) == 0 {
			m = nil // an empty table is left out when rendered
		}
		*at(s) = lowerMACKeys(m)
	}
	return v
}

// tag is a string key whose only value, want, is read as true:
// fqdn.source = "from-dhcp". It is required in its table from the first
// release knowing it.
type tag[S any] struct {
	want string
	at   func(*S) *bool
}

func (t tag[S]) typ() ValueType                     { return TypeString }
func (t tag[S]) sub() schemaTable                   { return nil }
func (t tag[S]) field(s *S) any                     { return t.at(s) }
func (t tag[S]) isSet(s *S) bool                    { return *t.at(s) }
func (t tag[S]) clear(s *S)                         { *t.at(s) = false }
func (t tag[S]) atDefault(*S, any) bool             { return false }
func (t tag[S]) render(s *S, _ Version) (any, bool) { return t.want, *t.at(s) }
func (t tag[S]) adapt(*S, *adapter)                 {}
func (t tag[S]) check(*checker, string, *S)         {}

func (t tag[S]) decode(s *S, x any, r *reader, k keyRule) {
	str, ok := x.(string)
	if !ok {
		r.bad(k.path, "want a string, got %s", typeName(x))
	}
	switch str {
	case t.want:
		*t.at(s) = true
	case "":
		t.absent(s, r, k)
	default:
		r.bad(k.path, "%q: want %q", str, t.want)
	}
}

// absent reads the value the installer defaults the key to in the
// table form: a table with only fqdn.domain is from DHCP too.
func (t tag[S]) absent(s *S, r *reader, k keyRule) {
	if k.knownTo(r.d.v) {
		*t.at(s) = true
	}
}

// fqdnValue is global.fqdn: a name, or the table form (8.4+) of fqdnTable.
type fqdnValue struct{ t *table[FQDN] }

func (f fqdnValue) typ() ValueType              { return TypeStringOrTable }
func (f fqdnValue) sub() schemaTable            { return f.t }
func (f fqdnValue) field(g *Global) any         { return &g.FQDN }
func (f fqdnValue) isSet(g *Global) bool        { return g.FQDN != FQDN{} }
func (f fqdnValue) clear(g *Global)             { g.FQDN = FQDN{} }
func (f fqdnValue) atDefault(*Global, any) bool { return false }
func (f fqdnValue) absent(*Global, *reader, keyRule) {
}

func (f fqdnValue) render(g *Global, v Version) (any, bool) {
	if g.FQDN.FromDHCP {
		t := f.t.render(&g.FQDN, v)
		return t, len(t) > 0
	}
	return g.FQDN.Name, g.FQDN.Name != ""
}

func (f fqdnValue) decode(g *Global, x any, r *reader, k keyRule) {
	switch y := x.(type) {
	case string:
		g.FQDN.Name = y
	case map[string]any:
		if form := f.t.rules[0]; !form.knownTo(r.d.v) {
			r.d.errs = append(r.d.errs, form.unsupported(lastElem(form.path), form.since, r.d.v))
			return
		}
		f.t.decode(&g.FQDN, f.t.reader(r.d, y))
	default:
		r.bad(k.path, "want a string or a table, got %s", typeName(x))
	}
}

// adapt refuses the table form where the installer does not know it:
// leaving it out would leave the answer without its required fqdn.
func (f fqdnValue) adapt(g *Global, a *adapter) {
	for i, row := range f.t.rows {
		if _, form := row.val.(tag[FQDN]); form && row.val.isSet(&g.FQDN) && !f.t.rules[i].knownTo(a.v) {
			a.unsupported(f.t.rules[i])
		}
	}
}

func (f fqdnValue) check(c *checker, path string, g *Global) { c.fqdn(path, &g.FQDN) }

// tableValue is an optional table (a pointer to T): an options table or an
// optional section.
type tableValue[S, T any] struct {
	at func(*S) **T
	t  *table[T]
	// emptyIsNone reads an empty table as none, and lets a table holding
	// only defaults stand for the installer's default.
	emptyIsNone bool
}

// options is an optional table; nil leaves it out.
func options[S, T any](at func(*S) **T, t *table[T]) *tableValue[S, T] {
	return &tableValue[S, T]{at: at, t: t}
}

// orNone makes an empty table read as none (see emptyIsNone).
func (v *tableValue[S, T]) orNone() *tableValue[S, T] {
	v.emptyIsNone = true
	return v
}

func (v *tableValue[S, T]) typ() ValueType   { return TypeTable }
func (v *tableValue[S, T]) sub() schemaTable { return v.t }
func (v *tableValue[S, T]) field(s *S) any   { return v.at(s) }
func (v *tableValue[S, T]) isSet(s *S) bool  { return *v.at(s) != nil }
func (v *tableValue[S, T]) clear(s *S)       { *v.at(s) = nil }
func (v *tableValue[S, T]) absent(*S, *reader, keyRule) {
}

func (v *tableValue[S, T]) atDefault(s *S, _ any) bool {
	return v.emptyIsNone && v.t.onlyDefaults(*v.at(s))
}

func (v *tableValue[S, T]) render(s *S, ver Version) (any, bool) {
	p := *v.at(s)
	if p == nil {
		return nil, false
	}
	t := v.t.render(p, ver)
	return t, len(t) > 0
}

func (v *tableValue[S, T]) decode(s *S, x any, r *reader, k keyRule) {
	m, ok := x.(map[string]any)
	if !ok {
		r.bad(k.path, "want a table, got %s", typeName(x))
		return
	}
	p := new(T)
	v.t.decode(p, v.t.reader(r.d, m))
	if !v.emptyIsNone || v.t.anySet(p) {
		*v.at(s) = p
	}
}

// adapt adapts a copy, leaving the caller's table alone.
func (v *tableValue[S, T]) adapt(s *S, a *adapter) {
	c := **v.at(s)
	*v.at(s) = &c
	v.t.adapt(&c, a)
}

func (v *tableValue[S, T]) check(c *checker, _ string, s *S) {
	if p := *v.at(s); p != nil {
		v.t.checkAll(c, p)
	}
}

// sectionValue is a required section (a T held by value).
type sectionValue[S, T any] struct {
	at func(*S) *T
	t  *table[T]
}

// section is a required section.
func section[S, T any](at func(*S) *T, t *table[T]) sectionValue[S, T] {
	return sectionValue[S, T]{at: at, t: t}
}

func (v sectionValue[S, T]) typ() ValueType         { return TypeTable }
func (v sectionValue[S, T]) sub() schemaTable       { return v.t }
func (v sectionValue[S, T]) field(s *S) any         { return v.at(s) }
func (v sectionValue[S, T]) isSet(*S) bool          { return true }
func (v sectionValue[S, T]) atDefault(*S, any) bool { return false }
func (v sectionValue[S, T]) adapt(s *S, a *adapter) { v.t.adapt(v.at(s), a) }

func (v sectionValue[S, T]) clear(s *S) {
	var zero T
	*v.at(s) = zero
}

func (v sectionValue[S, T]) render(s *S, ver Version) (any, bool) {
	t := v.t.render(v.at(s), ver)
	return t, len(t) > 0
}

func (v sectionValue[S, T]) decode(s *S, x any, r *reader, k keyRule) {
	m, ok := x.(map[string]any)
	if !ok {
		r.bad(k.path, "want a table, got %s", typeName(x))
		v.absent(s, r, k)
		return
	}
	v.t.decode(v.at(s), v.t.reader(r.d, m))
}

func (v sectionValue[S, T]) absent(_ *S, r *reader, k keyRule) {
	r.bad(k.path, "section required")
}

func (v sectionValue[S, T]) check(c *checker, _ string, s *S) { v.t.checkAll(c, v.at(s)) }
