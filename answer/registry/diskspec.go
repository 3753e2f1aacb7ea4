package registry

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// BootDiskKind says how a [BootDisk] picks the disk the installer formats.
type BootDiskKind int

const (
	// BootDiskAsk leaves the choice to the console: the answer endpoint
	// needs a ?bootdisk=NAME query, added by the boot-time prompt. It is the
	// zero value, and what an empty --boot-disk means (as in TAPPaaS).
	BootDiskAsk BootDiskKind = iota
	// BootDiskAny lets the installer take the first disk it lists (udev
	// index order); see [BootDisk.UdevFilter].
	BootDiskAny
	// BootDiskName selects a disk by its kernel name (sda, nvme0n1), which
	// goes into the answer's disk-list. NVMe names can swap between boots;
	// prefer a serial.
	BootDiskName
	// BootDiskSerial selects a disk by its serial number through a udev
	// filter on ID_SERIAL with the glob *SERIAL*.
	BootDiskSerial
)

// String returns "ask", "any", "name" or "serial".
func (k BootDiskKind) String() string {
	switch k {
	case BootDiskAsk:
		return "ask"
	case BootDiskAny:
		return "any"
	case BootDiskName:
		return "name"
	case BootDiskSerial:
		return "serial"
	}
	return fmt.Sprintf("BootDiskKind(%d)", int(k))
}

// BootDisk is the disk the installer puts the system on. In a registration
// file it is the single string TAPPaaS writes under "boot_disk" ("ask", a
// kernel name such as "sda", or a serial such as "25414A800205"), plus
// "any"; [ParseBootDisk] tells them apart by their shape, and
// [BootDisk.String] writes them back the same way.
//
// The zero value asks on the console ([BootDiskAsk]).
type BootDisk struct {
	// Kind says how the disk is picked.
	Kind BootDiskKind
	// Value is the kernel name (BootDiskName) or serial (BootDiskSerial);
	// empty for the other kinds.
	Value string
}

// ParseBootDisk reads a --boot-disk value or a registration's boot_disk:
//
//   - "" or "ask" (any case): [BootDiskAsk];
//   - "any" (any case): [BootDiskAny], the first disk the installer lists;
//   - a whole-disk kernel name (sdX, vdX, hdX, xvdX, nvmeNnM, mmcblkN):
//     [BootDiskName];
//   - anything else made of letters, digits, '.', '_' and '-' (starting
//     with a letter or digit, at most 128 characters): [BootDiskSerial].
//
// A path ("/dev/sda"), a partition ("sda1", "nvme0n1p2"), spaces and glob
// characters are refused with an error wrapping [ErrInvalidBootDisk].
func ParseBootDisk(s string) (BootDisk, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "", "ask":
		return BootDisk{Kind: BootDiskAsk}, nil
	case "any":
		return BootDisk{Kind: BootDiskAny}, nil
	}
	kind, err := classifyDisk(t)
	if err != nil {
		return BootDisk{}, invalid(ErrInvalidBootDisk, "invalid boot disk %q: %s", s, err)
	}
	if kind == diskName {
		return BootDisk{Kind: BootDiskName, Value: t}, nil
	}
	return BootDisk{Kind: BootDiskSerial, Value: t}, nil
}

// String returns the form [ParseBootDisk] reads back: "ask", "any", the
// kernel name or the serial.
func (b BootDisk) String() string {
	switch b.Kind {
	case BootDiskAsk:
		return "ask"
	case BootDiskAny:
		return "any"
	}
	return b.Value
}

// Validate reports whether b is one [ParseBootDisk] could have returned,
// with an error wrapping [ErrInvalidBootDisk] otherwise.
func (b BootDisk) Validate() error {
	switch b.Kind {
	case BootDiskAsk, BootDiskAny:
		if b.Value != "" {
			return invalid(ErrInvalidBootDisk, "invalid boot disk: kind %s takes no value, got %q", b.Kind, b.Value)
		}
		return nil
	case BootDiskName, BootDiskSerial:
		p, err := ParseBootDisk(b.Value)
		if err != nil {
			return err
		}
		if p != b {
			return invalid(ErrInvalidBootDisk, "invalid boot disk %q: it reads as a %s, not a %s", b.Value, p.Kind, b.Kind)
		}
		return nil
	}
	return invalid(ErrInvalidBootDisk, "invalid boot disk: unknown kind %d", int(b.Kind))
}

// MarshalText writes [BootDisk.String].
func (b BootDisk) MarshalText() ([]byte, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// UnmarshalText reads a value with [ParseBootDisk].
func (b *BootDisk) UnmarshalText(text []byte) error {
	p, err := ParseBootDisk(string(text))
	if err != nil {
		return err
	}
	*b = p
	return nil
}

// DiskList returns the answer's disk-list for a [BootDiskName] disk, and
// nil for every other kind.
func (b BootDisk) DiskList() []string {
	if b.Kind == BootDiskName {
		return []string{b.Value}
	}
	return nil
}

// UdevFilter returns the answer's disk-setup filter: ID_SERIAL = "*SERIAL*"
// for a [BootDiskSerial] disk, DEVNAME = "/dev/*" (which every disk has, so
// the installer takes the first disk of its udev index) for
// [BootDiskAny], and nil otherwise. A [BootDiskAsk] disk has neither a
// filter nor a disk list until the console's choice arrives.
func (b BootDisk) UdevFilter() map[string]string {
	switch b.Kind {
	case BootDiskSerial:
		return map[string]string{"ID_SERIAL": "*" + b.Value + "*"}
	case BootDiskAny:
		return map[string]string{"DEVNAME": "/dev/*"}
	}
	return nil
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

// MinDisks returns the fewest disks the layout takes (0 for an unknown
// layout). TAPPaaS asks for two for every layout but single; raidz2 needs
// three here, since zpool refuses double parity on two disks.
func (l Layout) MinDisks() int {
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
		if _, err := classifyDisk(d); err != nil {
			return invalid(ErrInvalidPool, "invalid disk %q in pool %s: %s", d, p.Name, err)
		}
		if slices.Contains(p.Disks[:i], d) {
			return invalid(ErrInvalidPool, "disk %q is listed twice in pool %s", d, p.Name)
		}
	}
	switch n, min := len(p.Disks), p.Layout.MinDisks(); {
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
	// kernelDiskRe matches the whole-disk kernel names the brief names.
	kernelDiskRe = regexp.MustCompile(`^(?:(?:sd|vd|hd|xvd)[a-z]+|nvme[0-9]+n[0-9]+|mmcblk[0-9]+)$`)
	// kernelPartRe matches their partitions, which are refused.
	kernelPartRe = regexp.MustCompile(`^(?:(?:sd|vd|hd|xvd)[a-z]+[0-9]+|nvme[0-9]+n[0-9]+p[0-9]+|mmcblk[0-9]+p[0-9]+|nvme[0-9]+)$`)
	serialRe     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

const maxSerialLen = 128

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

type diskKind int

const (
	diskName diskKind = iota + 1
	diskSerial
)

// classifyDisk tells a kernel name from a serial; the error says what is
// wrong in words that follow "invalid disk X: ".
func classifyDisk(s string) (diskKind, error) {
	switch {
	case s == "":
		return 0, fmt.Errorf("empty; give a serial (lsblk -o NAME,SERIAL) or a kernel name such as sda")
	case strings.Contains(s, "/"):
		return 0, fmt.Errorf("a path; give a bare kernel name (sda, nvme0n1) or a serial")
	case strings.ContainsAny(s, "*?[]!"):
		return 0, fmt.Errorf("glob characters are not allowed; give a serial or a kernel name")
	case kernelDiskRe.MatchString(s):
		return diskName, nil
	case kernelPartRe.MatchString(s):
		return 0, fmt.Errorf("a partition or controller; give the whole disk (sda, nvme0n1) or its serial")
	case strings.EqualFold(s, "ask") || strings.EqualFold(s, "any"):
		return 0, fmt.Errorf("a keyword, not a disk")
	case len(s) > maxSerialLen:
		return 0, fmt.Errorf("longer than %d characters", maxSerialLen)
	case !serialRe.MatchString(s):
		return 0, fmt.Errorf("a serial takes letters, digits, '.', '_' and '-', starting with a letter or digit")
	}
	return diskSerial, nil
}
