package registry

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/answer"
)

// ParseBootDisk reads a registration's boot_disk (or a --boot-disk
// value) with [answer.ParseBootDisk]; its errors also match
// [ErrInvalidRegistration].
func ParseBootDisk(s string) (answer.BootDisk, error) {
	b, err := answer.ParseBootDisk(s)
	if err != nil {
		return b, invalid(ErrInvalidBootDisk, "%s", err.Error())
	}
	return b, nil
}

// Layout is a data pool's ZFS layout.
type Layout string

// The layouts a pool spec accepts, as in TAPPaaS.
const (
	LayoutSingle Layout = "single" // exactly one disk
	LayoutStripe Layout = "stripe" // two or more disks, no redundancy
	LayoutMirror Layout = "mirror" // two or more disks, one mirror vdev
	LayoutRaidz  Layout = "raidz"  // two or more disks, single parity
	LayoutRaidz2 Layout = "raidz2" // three or more disks, double parity
)

// layouts lists the valid layouts in the order error messages name them.
var layouts = []Layout{LayoutSingle, LayoutStripe, LayoutMirror, LayoutRaidz, LayoutRaidz2}

// minDisks returns the fewest disks the layout takes (0 for an unknown
// layout). TAPPaaS asks for two for every layout but single; raidz2 needs
// three here, since zpool refuses double parity on two disks.
func (l Layout) minDisks() int {
	switch l {
	case LayoutSingle:
		return 1
	case LayoutStripe, LayoutMirror, LayoutRaidz:
		return 2
	case LayoutRaidz2:
		return 3
	}
	return 0
}

// VdevType returns the zpool create vdev keyword for the layout: "" for
// single and stripe (plain disks), "mirror", "raidz" or "raidz2".
func (l Layout) VdevType() string {
	switch l {
	case LayoutMirror, LayoutRaidz, LayoutRaidz2:
		return string(l)
	}
	return ""
}

// DataPool is a ZFS pool created on first boot, in TAPPaaS's registration
// format ({"name", "layout", "disks"}). A disk is a serial (looked up
// under /dev/disk/by-id) or a kernel name, told apart as in
// [ParseBootDisk].
type DataPool struct {
	// Name is the zpool name, such as "tanka1".
	Name string `json:"name"`
	// Layout is how the disks are combined.
	Layout Layout `json:"layout"`
	// Disks are serials or kernel names, in spec order.
	Disks []string `json:"disks"`
}

// ParsePoolSpec reads a --pool value, name=layout:disk[,disk...], as
// TAPPaaS does: it splits on the first '=' and then the first ':', trims
// the disks and drops empty ones. The name follows the registration name
// rules and zpool's (it starts with a letter and is not a reserved word
// such as "mirror"); the layout is one of single, stripe, mirror, raidz and
// raidz2; single takes exactly one disk, raidz2 at least three, the others
// at least two; a disk is a serial or a kernel name and is listed once.
// Errors wrap [ErrInvalidPool] and use TAPPaaS's messages (values quoted
// Go-style).
func ParsePoolSpec(s string) (DataPool, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok {
		return DataPool{}, invalid(ErrInvalidPool, "pool spec must be name=layout:disks, got %q", s)
	}
	layout, disks, ok := strings.Cut(rest, ":")
	if !ok {
		return DataPool{}, invalid(ErrInvalidPool, "pool spec must be name=layout:disks, got %q", s)
	}
	p := DataPool{Name: strings.TrimSpace(name), Layout: Layout(strings.TrimSpace(layout)), Disks: []string{}}
	for d := range strings.SplitSeq(disks, ",") {
		if d = strings.TrimSpace(d); d != "" {
			p.Disks = append(p.Disks, d)
		}
	}
	if err := p.Validate(); err != nil {
		return DataPool{}, err
	}
	return p, nil
}

// String returns the spec [ParsePoolSpec] reads back, such as
// "tankb1=mirror:sdb,sdc".
func (p DataPool) String() string {
	return p.Name + "=" + string(p.Layout) + ":" + strings.Join(p.Disks, ",")
}

// Validate checks p as [ParsePoolSpec] does, with errors wrapping
// [ErrInvalidPool].
func (p DataPool) Validate() error {
	if err := validatePoolName(p.Name); err != nil {
		return err
	}
	if !slices.Contains(layouts, p.Layout) {
		return invalid(ErrInvalidPool, "invalid pool layout %q (one of single, stripe, mirror, raidz, raidz2)", string(p.Layout))
	}
	if len(p.Disks) == 0 {
		return invalid(ErrInvalidPool, "pool spec has no disks")
	}
	for i, d := range p.Disks {
		if _, err := answer.ClassifyDisk(d); err != nil {
			return invalid(ErrInvalidPool, "invalid disk %q in pool %s: %s", d, p.Name, err)
		}
		if slices.Contains(p.Disks[:i], d) {
			return invalid(ErrInvalidPool, "disk %q is listed twice in pool %s", d, p.Name)
		}
	}
	switch n, min := len(p.Disks), p.Layout.minDisks(); {
	case p.Layout == LayoutSingle && n != 1:
		return invalid(ErrInvalidPool, "layout 'single' takes exactly one disk")
	case n < min:
		return invalid(ErrInvalidPool, "layout '%s' needs at least %s disks", p.Layout, countWord(min))
	}
	return nil
}

func countWord(n int) string {
	switch n {
	case 2:
		return "two"
	case 3:
		return "three"
	}
	return fmt.Sprint(n)
}

var (
	poolNameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)
)

// maxSerialLen bounds a serial pin, as [answer.MaxDiskSerial] a disk's.
const maxSerialLen = answer.MaxDiskSerial

func validatePoolName(name string) error {
	const rule = "letters, digits, '-' and '_', starting with a letter, at most 63"
	if len(name) > maxNameLen || !poolNameRe.MatchString(name) {
		return invalid(ErrInvalidPool, "invalid pool name %q (%s)", name, rule)
	}
	l := strings.ToLower(name)
	for _, w := range []string{"mirror", "raidz", "draid", "spare"} {
		if strings.HasPrefix(l, w) {
			return invalid(ErrInvalidPool, "invalid pool name %q: zpool reserves names starting with %q", name, w)
		}
	}
	if l == "log" {
		return invalid(ErrInvalidPool, "invalid pool name %q: zpool reserves it", name)
	}
	if len(l) > 1 && l[0] == 'c' && l[1] >= '0' && l[1] <= '9' {
		return invalid(ErrInvalidPool, "invalid pool name %q: zpool refuses names that look like a disk (c followed by a digit)", name)
	}
	return nil
}
