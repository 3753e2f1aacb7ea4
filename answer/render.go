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
}

// Render writes a as answer.toml for installer v: keys in snake_case
// before 8.4 (except inside [first-boot], kebab-case since it appeared in
// 8.3; [disk-setup] is always kebab-case), kebab-case from 8.4, and only
// keys v knows (see [Validate] for the rules and what happens to newer
// keys). Sections come in the order global, network, disk-setup,
// post-installation-webhook, first-boot; options tables (disk-setup.zfs,
// udev filters) become sub-tables. The output is deterministic.
//
// Render validates first: errors wrap [ErrInvalid] or [ErrUnsupported]
// (an [*UnsupportedError] for a key too new for v).
func Render(a *Answer, v Version, opts RenderOptions) ([]byte, error) {
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
	body, err := marshalTable(document(b, v))
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

// table is an ordered TOML table; values are string, bool, int64, float64,
// []string, map[string]string or table.
type table []entry

// entry is one key of a table.
type entry struct {
	key   string
	value any
}

// doc builds a table with the key names of one installer version.
type doc struct {
	v Version
	t table
}

// put adds the key at the canonical path unless value is empty.
func (d *doc) put(path string, value any) {
	switch x := value.(type) {
	case string:
		if x == "" {
			return
		}
	case []string:
		if len(x) == 0 {
			return
		}
	case map[string]string:
		if len(x) == 0 {
			return
		}
	case table:
		if len(x) == 0 {
			return
		}
	case *bool:
		if x == nil {
			return
		}
		value = *x
	case *int:
		if x == nil {
			return
		}
		value = int64(*x)
	case *float64:
		if x == nil {
			return
		}
		value = *x
	}
	d.t = append(d.t, entry{rule(path).name(d.v), value})
}

// sub builds the table at path with fill and adds it unless empty.
func (d *doc) sub(path string, fill func(*doc)) {
	s := doc{v: d.v}
	fill(&s)
	d.put(path, s.t)
}

// document lays out an adapted, valid answer for installer v.
func document(a *Answer, v Version) table {
	root := doc{v: v}
	root.sub("global", func(d *doc) {
		g := &a.Global
		d.put("global.keyboard", g.Keyboard)
		d.put("global.country", g.Country)
		if g.FQDN.FromDHCP {
			d.sub("global.fqdn", func(f *doc) {
				f.put("global.fqdn.source", "from-dhcp")
				f.put("global.fqdn.domain", g.FQDN.Domain)
			})
		} else {
			d.put("global.fqdn", g.FQDN.Name)
		}
		d.put("global.mailto", g.Mailto)
		d.put("global.timezone", g.Timezone)
		d.put("global.root-password", g.RootPassword)
		d.put("global.root-password-hashed", g.RootPasswordHashed)
		d.put("global.reboot-on-error", g.RebootOnError)
		d.put("global.reboot-mode", string(g.RebootMode))
		d.put("global.root-ssh-keys", g.RootSSHKeys)
		d.put("global.subscription-key", g.SubscriptionKey)
	})
	root.sub("network", func(d *doc) {
		n := &a.Network
		d.put("network.source", string(n.Source))
		d.put("network.cidr", n.CIDR)
		d.put("network.dns", n.DNS)
		d.put("network.gateway", n.Gateway)
		d.put("network.filter", n.Filter)
		if p := n.InterfaceNamePinning; p != nil {
			d.sub("network.interface-name-pinning", func(s *doc) {
				s.put("network.interface-name-pinning.enabled", p.Enabled)
				mapping := make(map[string]string, len(p.Mapping))
				for mac, name := range p.Mapping {
					m, _ := canonicalMAC(mac)
					mapping[m] = name
				}
				s.put("network.interface-name-pinning.mapping", mapping)
			})
		}
	})
	root.sub("disk-setup", func(d *doc) {
		ds := &a.DiskSetup
		d.put("disk-setup.filesystem", string(ds.Filesystem))
		d.put("disk-setup.disk-list", ds.DiskList)
		d.put("disk-setup.filter-match", string(ds.FilterMatch))
		d.put("disk-setup.filter", ds.Filter)
		if z := ds.ZFS; z != nil {
			d.sub("disk-setup.zfs", func(s *doc) {
				s.put("disk-setup.zfs.raid", string(z.Raid))
				s.put("disk-setup.zfs.ashift", z.Ashift)
				s.put("disk-setup.zfs.arc-max", z.ArcMax)
				s.put("disk-setup.zfs.checksum", z.Checksum)
				s.put("disk-setup.zfs.compress", z.Compress)
				s.put("disk-setup.zfs.copies", z.Copies)
				s.put("disk-setup.zfs.hdsize", z.HDSize)
			})
		}
		if l := ds.LVM; l != nil {
			d.sub("disk-setup.lvm", func(s *doc) {
				s.put("disk-setup.lvm.hdsize", l.HDSize)
				s.put("disk-setup.lvm.swapsize", l.SwapSize)
				s.put("disk-setup.lvm.maxroot", l.MaxRoot)
				s.put("disk-setup.lvm.maxvz", l.MaxVZ)
				s.put("disk-setup.lvm.minfree", l.MinFree)
			})
		}
		if b := ds.Btrfs; b != nil {
			d.sub("disk-setup.btrfs", func(s *doc) {
				s.put("disk-setup.btrfs.raid", string(b.Raid))
				s.put("disk-setup.btrfs.hdsize", b.HDSize)
				s.put("disk-setup.btrfs.compress", b.Compress)
			})
		}
	})
	if w := a.PostInstallationWebhook; w != nil {
		root.sub("post-installation-webhook", func(d *doc) {
			d.put("post-installation-webhook.url", w.URL)
			d.put("post-installation-webhook.cert-fingerprint", w.CertFingerprint)
			d.put("post-installation-webhook.auth-token", w.AuthToken)
		})
	}
	if f := a.FirstBoot; f != nil {
		root.sub("first-boot", func(d *doc) {
			d.put("first-boot.source", string(f.Source))
			d.put("first-boot.ordering", string(f.Ordering))
			d.put("first-boot.url", f.URL)
			d.put("first-boot.cert-fingerprint", f.CertFingerprint)
		})
	}
	return root.t
}

// marshalTable encodes an ordered table with go-toml. go-toml keeps the
// field order of structs (maps it sorts), so each table becomes a struct
// type built at run time, whose field tags are the keys. Free-form keys
// (udev filters, MAC mappings) stay maps, which go-toml quotes as needed.
func marshalTable(t table) ([]byte, error) {
	var buf bytes.Buffer
	enc := toml.NewEncoder(&buf)
	enc.SetIndentTables(false)
	if err := enc.Encode(structOf(t).Interface()); err != nil {
		return nil, fmt.Errorf("encode toml: %w", err)
	}
	return buf.Bytes(), nil
}

// structOf returns a struct value with one field per entry of t.
func structOf(t table) reflect.Value {
	fields := make([]reflect.StructField, len(t))
	values := make([]reflect.Value, len(t))
	for i, e := range t {
		rv := reflect.ValueOf(e.value)
		if sub, ok := e.value.(table); ok {
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
// from-dhcp before 9.2, as in the installer. Empty lvm and
// interface-name-pinning tables are read as absent (Render writes no empty
// table).
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
	d := &decoder{v: v}
	a := d.answer(m)
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
	d    *decoder
	path string // canonical path of the table, "" for the root
	m    map[string]any
	used map[string]bool
}

func (d *decoder) reader(path string, m map[string]any) *reader {
	return &reader{d: d, path: path, m: m, used: map[string]bool{}}
}

func (r *reader) bad(path, format string, args ...any) {
	r.d.errs = append(r.d.errs, fmt.Errorf("%w: %s: %s", ErrInvalid, path, fmt.Sprintf(format, args...)))
}

// join appends a key to the reader's path.
func (r *reader) join(key string) string {
	if r.path == "" {
		return key
	}
	return r.path + "." + key
}

// get returns the value of the key with canonical name key under any
// spelling the version accepts.
func (r *reader) get(key string) (any, bool) {
	path := r.join(key)
	var found []string
	for _, name := range rule(path).accepts(r.d.v) {
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
	r.bad(path, "set twice, as %s", strings.Join(found, " and "))
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
	}
	return "a date or time"
}

func (r *reader) str(key string) string {
	x, ok := r.get(key)
	if !ok {
		return ""
	}
	s, ok := x.(string)
	if !ok {
		r.bad(r.join(key), "want a string, got %s", typeName(x))
	}
	return s
}

func (r *reader) boolPtr(key string) *bool {
	x, ok := r.get(key)
	if !ok {
		return nil
	}
	b, ok := x.(bool)
	if !ok {
		r.bad(r.join(key), "want a boolean, got %s", typeName(x))
		return nil
	}
	return &b
}

func (r *reader) intPtr(key string) *int {
	x, ok := r.get(key)
	if !ok {
		return nil
	}
	i, ok := x.(int64)
	if !ok || i < math.MinInt32 || i > math.MaxInt32 {
		r.bad(r.join(key), "want an integer, got %s", typeName(x))
		return nil
	}
	n := int(i)
	return &n
}

func (r *reader) floatPtr(key string) *float64 {
	x, ok := r.get(key)
	if !ok {
		return nil
	}
	var f float64
	switch n := x.(type) {
	case float64:
		f = n
	case int64:
		f = float64(n)
	default:
		r.bad(r.join(key), "want a number, got %s", typeName(x))
		return nil
	}
	return &f
}

func (r *reader) strList(key string) []string {
	x, ok := r.get(key)
	if !ok {
		return nil
	}
	list, ok := x.([]any)
	if !ok {
		r.bad(r.join(key), "want an array of strings, got %s", typeName(x))
		return nil
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			r.bad(fmt.Sprintf("%s[%d]", r.join(key), i), "want a string, got %s", typeName(e))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (r *reader) strMap(key string) map[string]string {
	x, ok := r.get(key)
	if !ok {
		return nil
	}
	t, ok := x.(map[string]any)
	if !ok {
		r.bad(r.join(key), "want a table of strings, got %s", typeName(x))
		return nil
	}
	out := make(map[string]string, len(t))
	for _, k := range slices.Sorted(maps.Keys(t)) {
		s, ok := t[k].(string)
		if !ok {
			r.bad(fmt.Sprintf("%s.%q", r.join(key), k), "want a string, got %s", typeName(t[k]))
			continue
		}
		out[k] = s
	}
	return out
}

// sub returns a reader for the sub-table key, nil when absent.
func (r *reader) sub(key string) *reader {
	x, ok := r.get(key)
	if !ok {
		return nil
	}
	t, ok := x.(map[string]any)
	if !ok {
		r.bad(r.join(key), "want a table, got %s", typeName(x))
		return nil
	}
	return r.d.reader(r.join(key), t)
}

// done reports the keys of the table nothing read: a spelling of a newer
// version is unsupported, anything else unknown.
func (r *reader) done() {
	for _, k := range slices.Sorted(maps.Keys(r.m)) {
		if r.used[k] {
			continue
		}
		path := r.join(k)
		var since Version
		for _, kr := range keyRules {
			if parentPath(kr.path) != r.path {
				continue
			}
			for _, s := range kr.spellings() {
				if s.name == k && s.since > r.d.v {
					since = max(s.since, kr.since)
				}
			}
		}
		if since != 0 {
			r.d.errs = append(r.d.errs, &UnsupportedError{Key: path, Since: since, Version: r.d.v})
			continue
		}
		r.bad(path, "unknown key")
	}
}

func (d *decoder) answer(m map[string]any) *Answer {
	a := &Answer{}
	root := d.reader("", m)
	if g := root.sub("global"); g != nil {
		a.Global = g.global()
	} else {
		root.bad("global", "section required")
	}
	if n := root.sub("network"); n != nil {
		a.Network = n.network()
	} else {
		root.bad("network", "section required")
	}
	if ds := root.sub("disk-setup"); ds != nil {
		a.DiskSetup = ds.diskSetup()
	} else {
		root.bad("disk-setup", "section required")
	}
	if w := root.sub("post-installation-webhook"); w != nil {
		a.PostInstallationWebhook = &Webhook{
			URL:             w.str("url"),
			CertFingerprint: w.str("cert-fingerprint"),
			AuthToken:       w.str("auth-token"),
		}
		w.done()
	}
	if f := root.sub("first-boot"); f != nil {
		a.FirstBoot = &FirstBoot{
			Source:          FirstBootSource(f.str("source")),
			Ordering:        FirstBootOrdering(f.str("ordering")),
			URL:             f.str("url"),
			CertFingerprint: f.str("cert-fingerprint"),
		}
		f.done()
	}
	root.done()
	return a
}

func (r *reader) global() Global {
	g := Global{
		Keyboard: r.str("keyboard"),
		Country:  r.str("country"),
	}
	if x, ok := r.get("fqdn"); ok {
		switch f := x.(type) {
		case string:
			g.FQDN.Name = f
		case map[string]any:
			fr := r.d.reader("global.fqdn", f)
			switch src := fr.str("source"); src {
			case "from-dhcp":
				g.FQDN.FromDHCP = true
			case "":
				if fr.d.v.AtLeast(rule("global.fqdn.source").since) {
					fr.bad("global.fqdn.source", "required in the table form of global.fqdn")
				}
			default:
				fr.bad("global.fqdn.source", "%q: want \"from-dhcp\"", src)
			}
			g.FQDN.Domain = fr.str("domain")
			fr.done()
		default:
			r.bad("global.fqdn", "want a string or a table, got %s", typeName(x))
		}
	}
	g.Mailto = r.str("mailto")
	g.Timezone = r.str("timezone")
	g.RootPassword = r.str("root-password")
	g.RootPasswordHashed = r.str("root-password-hashed")
	g.RebootOnError = r.boolPtr("reboot-on-error")
	g.RebootMode = RebootMode(r.str("reboot-mode"))
	g.RootSSHKeys = r.strList("root-ssh-keys")
	g.SubscriptionKey = r.str("subscription-key")
	r.done()
	return g
}

func (r *reader) network() Network {
	n := Network{
		Source:  NetworkSource(r.str("source")),
		CIDR:    r.str("cidr"),
		DNS:     r.str("dns"),
		Gateway: r.str("gateway"),
		Filter:  r.strMap("filter"),
	}
	if n.Source == "" && r.d.v < Version92 {
		n.Source = NetworkFromDHCP
	}
	if p := r.sub("interface-name-pinning"); p != nil {
		pin := InterfaceNamePinning{
			Enabled: p.boolPtr("enabled"),
			Mapping: lowerMACKeys(p.strMap("mapping")),
		}
		// An empty table is rendered as none; read it as none.
		if pin.Enabled != nil || len(pin.Mapping) > 0 {
			n.InterfaceNamePinning = &pin
		}
		p.done()
	}
	r.done()
	return n
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

func (r *reader) diskSetup() DiskSetup {
	d := DiskSetup{
		Filesystem:  Filesystem(r.str("filesystem")),
		DiskList:    r.strList("disk-list"),
		Filter:      r.strMap("filter"),
		FilterMatch: FilterMatch(r.str("filter-match")),
	}
	if z := r.sub("zfs"); z != nil {
		d.ZFS = &ZFSOptions{
			Raid:     RaidLevel(z.str("raid")),
			Ashift:   z.intPtr("ashift"),
			ArcMax:   z.intPtr("arc-max"),
			Checksum: z.str("checksum"),
			Compress: z.str("compress"),
			Copies:   z.intPtr("copies"),
			HDSize:   z.floatPtr("hdsize"),
		}
		z.done()
	}
	if l := r.sub("lvm"); l != nil {
		lvm := LVMOptions{
			HDSize:   l.floatPtr("hdsize"),
			SwapSize: l.floatPtr("swapsize"),
			MaxRoot:  l.floatPtr("maxroot"),
			MaxVZ:    l.floatPtr("maxvz"),
			MinFree:  l.floatPtr("minfree"),
		}
		if lvm != (LVMOptions{}) {
			d.LVM = &lvm
		}
		l.done()
	}
	if b := r.sub("btrfs"); b != nil {
		d.Btrfs = &BtrfsOptions{
			Raid:     RaidLevel(b.str("raid")),
			HDSize:   b.floatPtr("hdsize"),
			Compress: b.str("compress"),
		}
		b.done()
	}
	r.done()
	return d
}
