package registry

import (
	"maps"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/hostname"
	"github.com/plasmactl/plasma-node/internal/usage"

	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Errors for bad registration input. Each error from a parser or Validate
// wraps one of them and also [ErrInvalidRegistration], so a command can map
// every bad input to one exit code with a single errors.Is.
var (
	// ErrInvalidRegistration is wrapped by every error about bad
	// registration input, together with the specific error below.
	ErrInvalidRegistration = usage.New("invalid registration")
	// ErrInvalidName: a node name that is not 1 to 63 letters, digits, '-'
	// or '_'.
	ErrInvalidName = errors.New("invalid name")
	// ErrInvalidMAC: a MAC address that is not six hex pairs, or is not a
	// NIC's own (broadcast, multicast, all zero): see [NormalizeMAC].
	ErrInvalidMAC = errors.New("invalid MAC address")
	// ErrInvalidBootDisk: a boot disk that is neither ask, any, a kernel
	// name nor a serial.
	ErrInvalidBootDisk = answer.ErrInvalidBootDisk
	// ErrInvalidPool: a bad data pool spec, or pools that clash with each
	// other or with the boot disk.
	ErrInvalidPool = errors.New("invalid pool")
	// ErrInvalidSerial: a DMI serial pin that is empty, unprintable or a
	// firmware placeholder.
	ErrInvalidSerial = errors.New("invalid serial")
	// ErrInvalidUUID: a DMI UUID pin that is not a UUID or is a firmware
	// placeholder.
	ErrInvalidUUID = errors.New("invalid UUID")
)

// ErrNotFound is returned (wrapped) by [Registrations.Get], [Registrations.Delete]
// and [Registrations.Consume] when no pending registration has the name.
var ErrNotFound = errors.New("no pending registration")

// inputError carries a message for people and the sentinels callers test.
type inputError struct {
	kind error
	msg  string
}

func (e *inputError) Error() string   { return e.msg }
func (e *inputError) Unwrap() []error { return []error{e.kind, ErrInvalidRegistration} }

func invalid(kind error, format string, args ...any) error {
	return &inputError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

const maxNameLen = 63

var (
	nameRe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// ValidateName checks a node name as TAPPaaS does (letters, digits, '-'
// and '_') and, since it becomes a host name, at most 63 characters. The
// error wraps [ErrInvalidName].
func ValidateName(name string) error {
	if len(name) > maxNameLen || !nameRe.MatchString(name) {
		return invalid(ErrInvalidName, "invalid name %q (1 to 63 letters, digits, '-' or '_')", name)
	}
	return nil
}

// ValidateHostname checks that a new registration's name can be the
// node's host name, the first label of its FQDN: an RFC 1123 label in
// lower case. TAPPaaS's looser names ([ValidateName]) still load, but a
// registration made now must pass this, or its answer would fail the
// installer's FQDN check. A name of digits only ("123") is refused too:
// every installer refuses a purely numeric host name, so such a node could
// never install. The error wraps [ErrInvalidName].
func ValidateHostname(name string) error {
	if !hostname.Valid(name) {
		return invalid(ErrInvalidName, "invalid name %q: it becomes the node's host name: want %s", name, hostname.Rule)
	}
	return nil
}

// MACRule is what an operator may give as a machine's MAC, as every
// refusal states it.
const MACRule = "a NIC's own address: six hex pairs such as 52:54:00:12:34:56, not broadcast, multicast or all zero"

// NormalizeMAC is the rule for a MAC given as a machine's identity (a
// registration's pins and management MAC, the pxe provider's hardware
// list): it returns the MAC in the form registrations store it, as TAPPaaS
// does (surrounding space stripped, lower case, '-' turned into ':'), and
// refuses what is not six hex pairs and what no machine's NIC has as its
// own: the broadcast address, multicast addresses (the first byte odd)
// and the all-zero address. The error states [MACRule] and wraps
// [ErrInvalidMAC].
//
// What an installer or a discovery report says about a NIC is read with
// the lenient [answer.CanonicalMAC] instead: it is matched, not pinned.
func NormalizeMAC(s string) (string, error) {
	m, ok := answer.CanonicalMAC(s)
	switch {
	case !ok:
		return "", invalid(ErrInvalidMAC, "invalid MAC address: %q (want %s)", s, MACRule)
	case m == "ff:ff:ff:ff:ff:ff":
		return "", invalid(ErrInvalidMAC, "invalid MAC address: %s is the broadcast address (want %s)", m, MACRule)
	case m == "00:00:00:00:00:00":
		return "", invalid(ErrInvalidMAC, "invalid MAC address: %s is all zero (want %s)", m, MACRule)
	case strings.IndexByte("13579bdf", m[1]) >= 0:
		return "", invalid(ErrInvalidMAC, "invalid MAC address: %s is a multicast address, its first byte odd (want %s)", m, MACRule)
	}
	return m, nil
}

// Registration is one machine allowed to get an answer: a pending entry
// of the allowlist, or, once served, the record of that. Its JSON is
// TAPPaaS's registration format (keys name, macs, boot_disk, pools,
// created, in that order) followed by this package's optional keys
// (serial, uuid, ssh_keys, bmc, secure_boot, network, nic_names, wipe_data, boot_method, media_answer, from_discovery, answer_settings, and once consumed consumed_at, install_ip, consumed_macs,
// consumed_serial, consumed_uuid), so a TAPPaaS file loads unchanged and
// ours round-trips. Keys neither knows are kept in Extra.
type Registration struct {
	// Name is the node's name and host name, and the file's stem.
	Name string
	// MACs pin the registration to these network interfaces (normalised
	// with [NormalizeMAC]). Optional.
	MACs []string
	// BootDisk is where the installer puts the system. A TAPPaaS file
	// without boot_disk means "sda", as TAPPaaS reads it.
	BootDisk answer.BootDisk
	// Pools are the data pools the first-boot script creates.
	Pools []DataPool
	// Created is when the registration was made.
	Created time.Time
	// Serial pins the registration to the machine's DMI system serial
	// (compared without case). Optional.
	Serial string
	// UUID pins the registration to the machine's DMI system UUID (lower
	// case). Optional.
	UUID string
	// SSHKeys are public keys for root's authorized_keys on this node, in
	// addition to the site's. Optional.
	SSHKeys []string
	// BMC is the machine's management controller, for power and a
	// one-time PXE boot; nil for none. Its password is kept in the
	// secrets folder, never in the registration.
	BMC *BMC
	// SecureBoot boots the machine through the window's Secure Boot chain
	// (shim, signed grub, signed kernel) instead of iPXE, also when the
	// window offers iPXE to others: its firmware has Secure Boot on.
	SecureBoot bool
	// Network is the node's static addressing, written into its answer
	// as from-answer; nil leaves the address to the site's DHCP server.
	Network *Network
	// NICNames pins its NICs' names: MAC (one of MACs) to interface
	// name ("nic0", "lan0"), written into its answer as
	// network.interface-name-pinning for installers from 9.1 (see
	// [Build]). Empty pins none (unless the site's PinNICNames does).
	NICNames map[string]string
	// WipeData makes its install's first-boot script create the data
	// pools anew over whatever their disks hold. False (the default)
	// keeps data: a pool found on its disks is imported, and a pool is
	// created only on disks that hold none ([FirstBootScript]). A
	// reinstall that wipes data sets it; any other re-arm clears it.
	WipeData bool
	// BootMethod is how its machine reaches the installer: over the
	// network or from virtual media through its BMC; "" is the site's
	// ([Site.BootOf]). Virtual media needs a Redfish BMC
	// ([CheckBootMethod]).
	BootMethod BootMethod
	// MediaAnswer is how an installer booted from virtual media gets
	// the answer: on its medium or over HTTP from the window; "" is the
	// site's, else on its medium.
	MediaAnswer MediaAnswer
	// FromDiscovery says the registration was made from the machine's
	// discovery report (an enrolment rule, register --from-discovered):
	// it pins every MAC and the DMI serial the report had, and is
	// answered only to a machine that posts exactly those
	// ([SameMachine]).
	FromDiscovery bool
	// Settings holds site settings this registration's answer overrides
	// (an enrolment rule's answer settings), each over the site's; nil
	// for none.
	Settings *Site
	// Consumed is nil while the registration is pending, and records the
	// request that was answered once it is consumed.
	Consumed *ConsumeRecord
	// Extra holds the keys of a registration file this package does not
	// know, written back after the known ones, so a rewrite loses nothing.
	Extra map[string]json.RawMessage
}

// Pinned reports whether the registration names its machine (by MAC,
// serial or UUID). A pinned registration only answers that machine.
func (r Registration) Pinned() bool {
	return len(r.MACs) > 0 || r.Serial != "" || r.UUID != ""
}

// KnownMACs returns the MAC addresses the registration answers to, in
// canonical form: those it pins and, once consumed, those its installer
// posted. Malformed ones are left out.
func (r Registration) KnownMACs() []string {
	all := r.MACs
	if r.Consumed != nil {
		all = append(slices.Clone(all), r.Consumed.MACs...)
	}
	var out []string
	for _, m := range all {
		if n, ok := answer.CanonicalMAC(m); ok && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Validate checks every field and how they fit together: the name, MACs
// (normalised and listed once), boot disk, pools (unique names, no disk in
// two pools, no pool on the boot disk, and no pool serial the boot disk's
// *SERIAL* filter would also match), and the serial and UUID pins. Errors
// wrap the specific sentinel and [ErrInvalidRegistration].
func (r Registration) Validate() error {
	if err := ValidateName(r.Name); err != nil {
		return err
	}
	for i, m := range r.MACs {
		n, err := NormalizeMAC(m)
		if err != nil {
			return err
		}
		if n != m {
			return invalid(ErrInvalidMAC, "MAC address %q is not normalised (want %q)", m, n)
		}
		if slices.Contains(r.MACs[:i], m) {
			return invalid(ErrInvalidMAC, "MAC address %s is listed twice", m)
		}
	}
	if err := r.BootDisk.Validate(); err != nil {
		return invalid(ErrInvalidBootDisk, "%s", err.Error())
	}
	seen := map[string]string{} // disk -> pool
	for i, p := range r.Pools {
		if err := p.Validate(); err != nil {
			return err
		}
		for _, q := range r.Pools[:i] {
			if q.Name == p.Name {
				return invalid(ErrInvalidPool, "pool %s is declared twice", p.Name)
			}
		}
		for _, d := range p.Disks {
			if other, ok := seen[d]; ok {
				return invalid(ErrInvalidPool, "disk %q is in pools %s and %s", d, other, p.Name)
			}
			seen[d] = p.Name
			if r.BootDisk.Value == d {
				return invalid(ErrInvalidPool, "disk %q is the boot disk and in pool %s; a data pool needs disks of its own", d, p.Name)
			}
			if r.BootDisk.Kind == answer.BootDiskSerial && strings.Contains(d, r.BootDisk.Value) {
				return invalid(ErrInvalidPool, "the boot disk filter *%s* would also match disk %q of pool %s; give the boot disk's full serial", r.BootDisk.Value, d, p.Name)
			}
		}
	}
	if r.Serial != "" {
		if err := validateSerialPin(r.Serial); err != nil {
			return err
		}
	}
	if r.UUID != "" {
		if err := validateUUIDPin(r.UUID); err != nil {
			return err
		}
	}
	if r.BMC != nil {
		if err := r.BMC.Validate(); err != nil {
			return err
		}
	}
	if r.Network != nil {
		if err := r.validateNetwork(); err != nil {
			return err
		}
	}
	if err := r.validateBoot(); err != nil {
		return err
	}
	return r.validateNICNames()
}

// normalize returns r with its MACs normalised and deduplicated, its
// serial trimmed and its UUID in lower case.
func (r Registration) normalize() (Registration, error) {
	var macs []string
	for _, m := range r.MACs {
		n, err := NormalizeMAC(m)
		if err != nil {
			return r, err
		}
		if !slices.Contains(macs, n) {
			macs = append(macs, n)
		}
	}
	r.MACs = macs
	if len(r.Pools) == 0 {
		r.Pools = nil
	}
	r.Serial = strings.TrimSpace(r.Serial)
	r.UUID = strings.ToLower(strings.TrimSpace(r.UUID))
	if r.Network != nil && r.Network.MAC != "" {
		n := *r.Network
		var err error
		if n.MAC, err = NormalizeMAC(n.MAC); err != nil {
			return r, err
		}
		r.Network = &n
	}
	if len(r.NICNames) > 0 {
		names := make(map[string]string, len(r.NICNames))
		for m, name := range r.NICNames {
			n, err := NormalizeMAC(m)
			if err != nil {
				return r, err
			}
			names[n] = name
		}
		r.NICNames = names
	} else {
		r.NICNames = nil
	}
	return r, nil
}

// placeholderSerials are DMI serials that firmware ships on many boards.
var placeholderSerials = []string{
	"0", "none", "n/a", "na", "null", "default string", "to be filled by o.e.m.",
	"to be filled by oem", "system serial number", "not specified", "not applicable",
	"not available", "chassis serial number", "0123456789", "123456789", "serial",
}

// placeholderUUIDs are DMI UUIDs that firmware ships on many boards.
var placeholderUUIDs = []string{
	"00000000-0000-0000-0000-000000000000",
	"ffffffff-ffff-ffff-ffff-ffffffffffff",
	"03000200-0400-0500-0006-000700080009",
}

// IsPlaceholderSerial reports whether a DMI serial is empty or one that
// many machines share, so it must neither be pinned nor matched.
func IsPlaceholderSerial(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || slices.Contains(placeholderSerials, s) {
		return true
	}
	return strings.Count(s, s[:1]) == len(s) // "00000000", "xxxx"
}

// IsPlaceholderUUID reports whether a DMI UUID is empty or one that many
// machines share, so it must neither be pinned nor matched.
func IsPlaceholderUUID(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	return s == "" || slices.Contains(placeholderUUIDs, s)
}

func validateSerialPin(s string) error {
	if s != strings.TrimSpace(s) || len(s) > maxSerialLen {
		return invalid(ErrInvalidSerial, "invalid serial %q (1 to %d printable characters, no surrounding space)", s, maxSerialLen)
	}
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e {
			return invalid(ErrInvalidSerial, "invalid serial %q (printable ASCII only)", s)
		}
	}
	if IsPlaceholderSerial(s) {
		return invalid(ErrInvalidSerial, "serial %q is a firmware placeholder that many machines share; pin a MAC or the UUID instead", s)
	}
	return nil
}

func validateUUIDPin(s string) error {
	if !uuidRe.MatchString(s) {
		return invalid(ErrInvalidUUID, "invalid UUID %q (want lower-case 8-4-4-4-12 hex such as bcf43ddf-6d92-4ace-b93f-76f71ffe4495)", s)
	}
	if IsPlaceholderUUID(s) {
		return invalid(ErrInvalidUUID, "UUID %q is a firmware placeholder that many machines share; pin a MAC or the serial instead", s)
	}
	return nil
}

// timeLayout writes times as Python's isoformat() does for UTC
// ("2026-07-06T12:00:00+00:00"), with a fraction only when there is one.
const timeLayout = "2006-01-02T15:04:05.999999999-07:00"

// Clone returns a copy of r that shares no slice, map or pointer with it.
func (r Registration) Clone() Registration {
	c := r
	c.MACs = slices.Clone(r.MACs)
	c.SSHKeys = slices.Clone(r.SSHKeys)
	c.Pools = slices.Clone(r.Pools)
	for i := range c.Pools {
		c.Pools[i].Disks = slices.Clone(r.Pools[i].Disks)
	}
	if r.Consumed != nil {
		cr := *r.Consumed
		cr.MACs = slices.Clone(r.Consumed.MACs)
		c.Consumed = &cr
	}
	if r.BMC != nil {
		b := *r.BMC
		c.BMC = &b
	}
	if r.Network != nil {
		n := *r.Network
		c.Network = &n
	}
	c.Extra = maps.Clone(r.Extra)
	return c
}
