package answer

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrInvalidBootDisk: a boot disk that is neither ask, any, a kernel
// name of a whole disk nor a serial.
var ErrInvalidBootDisk = errors.New("invalid boot disk")

// MaxDiskSerial bounds a disk serial: 128 characters.
const MaxDiskSerial = 128

var (
	// kernelDiskRe matches the whole-disk kernel names the brief names.
	kernelDiskRe = regexp.MustCompile(`^(?:(?:sd|vd|hd|xvd)[a-z]+|nvme[0-9]+n[0-9]+|mmcblk[0-9]+)$`)
	// kernelPartRe matches their partitions, which are refused.
	kernelPartRe = regexp.MustCompile(`^(?:(?:sd|vd|hd|xvd)[a-z]+[0-9]+|nvme[0-9]+n[0-9]+p[0-9]+|mmcblk[0-9]+p[0-9]+|nvme[0-9]+)$`)
	serialRe     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// bootDiskError says what is wrong in its own words and matches
// [ErrInvalidBootDisk].
type bootDiskError struct{ msg string }

func (e *bootDiskError) Error() string { return e.msg }
func (e *bootDiskError) Unwrap() error { return ErrInvalidBootDisk }

func invalidBootDisk(format string, args ...any) error {
	return &bootDiskError{fmt.Sprintf(format, args...)}
}

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
	kind, err := ClassifyDisk(t)
	if err != nil {
		return BootDisk{}, invalidBootDisk("invalid boot disk %q: %s", s, err)
	}
	if kind == BootDiskName {
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
			return invalidBootDisk("invalid boot disk: kind %s takes no value, got %q", b.Kind, b.Value)
		}
		return nil
	case BootDiskName, BootDiskSerial:
		p, err := ParseBootDisk(b.Value)
		if err != nil {
			return err
		}
		if p != b {
			return invalidBootDisk("invalid boot disk %q: it reads as a %s, not a %s", b.Value, p.Kind, b.Kind)
		}
		return nil
	}
	return invalidBootDisk("invalid boot disk: unknown kind %d", int(b.Kind))
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

// ClassifyDisk tells a whole-disk kernel name ([BootDiskName]) from a
// serial ([BootDiskSerial]); the error says what is wrong in words that
// follow "invalid disk X: ". Data pools name their disks the same way.
func ClassifyDisk(s string) (BootDiskKind, error) {
	switch {
	case s == "":
		return 0, fmt.Errorf("empty; give a serial (lsblk -o NAME,SERIAL) or a kernel name such as sda")
	case strings.Contains(s, "/"):
		return 0, fmt.Errorf("a path; give a bare kernel name (sda, nvme0n1) or a serial")
	case strings.ContainsAny(s, "*?[]!"):
		return 0, fmt.Errorf("glob characters are not allowed; give a serial or a kernel name")
	case kernelDiskRe.MatchString(s):
		return BootDiskName, nil
	case kernelPartRe.MatchString(s):
		return 0, fmt.Errorf("a partition or controller; give the whole disk (sda, nvme0n1) or its serial")
	case strings.EqualFold(s, "ask") || strings.EqualFold(s, "any"):
		return 0, fmt.Errorf("a keyword, not a disk")
	case len(s) > MaxDiskSerial:
		return 0, fmt.Errorf("longer than %d characters", MaxDiskSerial)
	case !serialRe.MatchString(s):
		return 0, fmt.Errorf("a serial takes letters, digits, '.', '_' and '-', starting with a letter or digit")
	}
	return BootDiskSerial, nil
}
