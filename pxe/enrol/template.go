package enrol

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// Template is a parsed name template: literal text and fields in
// braces. The fields are {n} (the rule's counter; {n:02} pads it with
// zeros to two digits and refuses numbers past 99), {site} (the first
// label of the site's domain), {dmi.serial}, {dmi.vendor},
// {dmi.product} and {mac} (the machine's lowest MAC, its hex digits).
// Machine data is written in lower case; the name made is checked by
// the host name rule.
type Template struct {
	text  string
	parts []part
}

type part struct {
	lit   string // literal text, when field is ""
	field string
	width int // {n:0W}: zero-padded to W digits, W at most 9
}

// fields a template takes besides n.
var fields = []string{"site", "dmi.serial", "dmi.vendor", "dmi.product", "mac"}

// ParseTemplate reads a name template. It refuses an unclosed or empty
// brace, an unknown field and a width that is not 0 followed by 1 to 9;
// the error wraps [ErrInvalidRule].
func ParseTemplate(s string) (Template, error) {
	t := Template{text: s}
	if s == "" {
		return t, fmt.Errorf("%w: empty name template: want one such as pve-{n:02}", ErrInvalidRule)
	}
	rest := s
	for rest != "" {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			t.parts = append(t.parts, part{lit: rest})
			break
		}
		if rest[i] == '}' {
			return t, fmt.Errorf("%w: name template %q: a '}' without its '{'", ErrInvalidRule, s)
		}
		if i > 0 {
			t.parts = append(t.parts, part{lit: rest[:i]})
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return t, fmt.Errorf("%w: name template %q: a '{' without its '}'", ErrInvalidRule, s)
		}
		f := rest[i+1 : i+j]
		rest = rest[i+j+1:]
		name, width, hasWidth := strings.Cut(f, ":")
		p := part{field: name}
		switch {
		case name == "n" && hasWidth:
			w, err := strconv.Atoi(width)
			if len(width) != 2 || width[0] != '0' || err != nil || w < 1 {
				return t, fmt.Errorf("%w: name template %q: width %q of {n}: want 0 and a digit, such as {n:02}", ErrInvalidRule, s, width)
			}
			p.width = w
		case name == "n":
		case hasWidth:
			return t, fmt.Errorf("%w: name template %q: {%s} takes no width (only {n} does)", ErrInvalidRule, s, f)
		case !contains(fields, name):
			return t, fmt.Errorf("%w: name template %q: unknown field {%s}: want n, %s", ErrInvalidRule, s, f, strings.Join(fields, ", "))
		}
		t.parts = append(t.parts, p)
	}
	return t, nil
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// String returns the template as written.
func (t Template) String() string { return t.text }

// Counted reports whether the template has {n}: a name taken by another
// machine then takes the next number; without it, a taken name is
// refused.
func (t Template) Counted() bool {
	for _, p := range t.parts {
		if p.field == "n" {
			return true
		}
	}
	return false
}

// MaxN is the largest counter the template can write: 10^W-1 for
// {n:0W}, 0 for no bound (plain {n} or no counter).
func (t Template) MaxN() int {
	m := 0
	for _, p := range t.parts {
		if p.field == "n" && p.width > 0 {
			w := 1
			for range p.width {
				w *= 10
			}
			if m == 0 || w-1 < m {
				m = w - 1
			}
		}
	}
	return m
}

// Vars are what a template's fields are filled with.
type Vars struct {
	// N is the counter.
	N int
	// Site is the site's name, the first label of its domain.
	Site string
	// Report is the machine's discovery report.
	Report discovery.Report
}

// Render fills the template. It refuses a counter past the template's
// width ([ErrCounterPastWidth]); it does not check the name made.
func (t Template) Render(v Vars) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		switch p.field {
		case "":
			b.WriteString(p.lit)
		case "n":
			if m := t.MaxN(); m > 0 && v.N > m {
				return "", fmt.Errorf("name template %q: %w: number %d does not fit in %d digits", t.text, ErrCounterPastWidth, v.N, p.width)
			}
			fmt.Fprintf(&b, "%0*d", p.width, v.N)
		case "site":
			b.WriteString(strings.ToLower(v.Site))
		case "dmi.serial":
			b.WriteString(strings.ToLower(v.Report.DMI.Serial))
		case "dmi.vendor":
			b.WriteString(strings.ToLower(v.Report.DMI.Vendor))
		case "dmi.product":
			b.WriteString(strings.ToLower(v.Report.DMI.Product))
		case "mac":
			macs := v.Report.MACs()
			if len(macs) > 0 {
				lowest := macs[0]
				for _, m := range macs[1:] {
					lowest = min(lowest, m)
				}
				b.WriteString(strings.ReplaceAll(strings.ToLower(lowest), ":", ""))
			}
		}
	}
	return b.String(), nil
}

// SiteName is the {site} of a domain: its first label.
func SiteName(domain string) string {
	name, _, _ := strings.Cut(domain, ".")
	return name
}
