package registry

import (
	"github.com/plasmactl/plasma-node/answer"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/lockfile"
)

// Errors for bad registration input. Each error from a parser or Validate
// wraps one of them and also [ErrInvalidRegistration], so a command can map
// every bad input to one exit code with a single errors.Is.
var (
	// ErrInvalidRegistration is wrapped by every error about bad
	// registration input, together with the specific error below.
	ErrInvalidRegistration = errors.New("invalid registration")
	// ErrInvalidName: a node name that is not 1 to 63 letters, digits, '-'
	// or '_'.
	ErrInvalidName = errors.New("invalid name")
	// ErrInvalidMAC: a MAC address that is not six hex pairs.
	ErrInvalidMAC = errors.New("invalid MAC address")
	// ErrInvalidBootDisk: a boot disk that is neither ask, any, a kernel
	// name nor a serial.
	ErrInvalidBootDisk = errors.New("invalid boot disk")
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

// ErrNotFound is returned (wrapped) by [Registry.Get], [Registry.Delete]
// and [Registry.Consume] when no pending registration has the name.
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

var hostnameRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidateHostname checks that a new registration's name can be the
// node's host name, the first label of its FQDN: an RFC 1123 label in
// lower case. TAPPaaS's looser names ([ValidateName]) still load, but a
// registration made now must pass this, or its answer would fail the
// installer's FQDN check. The error wraps [ErrInvalidName].
func ValidateHostname(name string) error {
	if !hostnameRe.MatchString(name) {
		return invalid(ErrInvalidName, "invalid name %q: it becomes the node's host name, so use a-z, 0-9 and '-' (1 to 63 characters, no leading or trailing '-')", name)
	}
	return nil
}

// NormalizeMAC returns a MAC address in the form registrations store it,
// as TAPPaaS does: surrounding space stripped, lower case, '-' turned into
// ':', and then it must be six hex pairs (aa:bb:cc:dd:ee:ff). The error
// wraps [ErrInvalidMAC].
func NormalizeMAC(s string) (string, error) {
	m, ok := answer.CanonicalMAC(s)
	if !ok {
		return "", invalid(ErrInvalidMAC, "invalid MAC address: %q (want six hex pairs such as aa:bb:cc:dd:ee:ff)", s)
	}
	return m, nil
}

// Registration is one machine allowed to get an answer: a pending entry
// of the allowlist, or, once served, the record of that. Its JSON is
// TAPPaaS's registration format (keys name, macs, boot_disk, pools,
// created, in that order) followed by this package's optional keys
// (serial, uuid, and once consumed consumed_at, install_ip, consumed_macs,
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
	BootDisk BootDisk
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
		if n, err := NormalizeMAC(m); err == nil && !slices.Contains(out, n) {
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
		return err
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
			if r.BootDisk.Kind == BootDiskSerial && strings.Contains(d, r.BootDisk.Value) {
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
	return nil
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

// isPlaceholderSerial reports whether a DMI serial is empty or one that
// many machines share, so it must neither be pinned nor matched.
func isPlaceholderSerial(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || slices.Contains(placeholderSerials, s) {
		return true
	}
	return strings.Count(s, s[:1]) == len(s) // "00000000", "xxxx"
}

func isPlaceholderUUID(s string) bool {
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
	if isPlaceholderSerial(s) {
		return invalid(ErrInvalidSerial, "serial %q is a firmware placeholder that many machines share; pin a MAC or the UUID instead", s)
	}
	return nil
}

func validateUUIDPin(s string) error {
	if !uuidRe.MatchString(s) {
		return invalid(ErrInvalidUUID, "invalid UUID %q (want lower-case 8-4-4-4-12 hex such as bcf43ddf-6d92-4ace-b93f-76f71ffe4495)", s)
	}
	if isPlaceholderUUID(s) {
		return invalid(ErrInvalidUUID, "UUID %q is a firmware placeholder that many machines share; pin a MAC or the serial instead", s)
	}
	return nil
}

// timeLayout writes times as Python's isoformat() does for UTC
// ("2026-07-06T12:00:00+00:00"), with a fraction only when there is one.
const timeLayout = "2006-01-02T15:04:05.999999999-07:00"

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

// parseTime reads RFC 3339 and Python's naive isoformat (taken as UTC).
func parseTime(key, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, invalid(ErrInvalidRegistration, "invalid %s %q (want an RFC 3339 time such as 2026-07-06T12:00:00+00:00)", key, s)
}

// registrationJSON is the file format; field order is key order.
type registrationJSON struct {
	Name           string     `json:"name"`
	MACs           []string   `json:"macs"`
	BootDisk       *string    `json:"boot_disk,omitempty"`
	Pools          []DataPool `json:"pools"`
	Created        string     `json:"created"`
	Serial         string     `json:"serial,omitempty"`
	UUID           string     `json:"uuid,omitempty"`
	SSHKeys        []string   `json:"ssh_keys,omitempty"`
	ConsumedAt     string     `json:"consumed_at,omitempty"`
	InstallIP      *string    `json:"install_ip,omitempty"`
	ConsumedMACs   []string   `json:"consumed_macs,omitempty"`
	ConsumedSerial string     `json:"consumed_serial,omitempty"`
	ConsumedUUID   string     `json:"consumed_uuid,omitempty"`
}

var knownKeys = []string{
	"name", "macs", "boot_disk", "pools", "created", "serial", "uuid", "ssh_keys",
	"consumed_at", "install_ip", "consumed_macs", "consumed_serial", "consumed_uuid",
}

// MarshalJSON writes the registration file format. It does not validate;
// [Registry.Put] does.
func (r Registration) MarshalJSON() ([]byte, error) {
	bd := r.BootDisk.String()
	w := registrationJSON{
		Name:     r.Name,
		MACs:     r.MACs,
		BootDisk: &bd,
		Pools:    r.Pools,
		Created:  formatTime(r.Created),
		Serial:   r.Serial,
		UUID:     r.UUID,
		SSHKeys:  r.SSHKeys,
	}
	if w.MACs == nil {
		w.MACs = []string{}
	}
	if w.Pools == nil {
		w.Pools = []DataPool{}
	}
	if c := r.Consumed; c != nil {
		ip := c.ClientIP
		w.ConsumedAt = formatTime(c.Time)
		w.InstallIP = &ip
		w.ConsumedMACs = c.MACs
		w.ConsumedSerial = c.Serial
		w.ConsumedUUID = c.UUID
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	out := bytes.TrimRight(buf.Bytes(), "\n")
	if len(r.Extra) == 0 {
		return out, nil
	}
	keys := make([]string, 0, len(r.Extra))
	for k := range r.Extra {
		if !slices.Contains(knownKeys, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out = out[:len(out)-1] // drop '}'
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		v := r.Extra[k]
		if !json.Valid(v) {
			return nil, fmt.Errorf("registration %s: extra key %s holds invalid JSON", r.Name, kb)
		}
		out = append(out, ',')
		out = append(out, kb...)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads the registration file format with
// [DecodeRegistration]'s defaults and checks, taking no name from a file
// name.
func (r *Registration) UnmarshalJSON(data []byte) error {
	d, err := DecodeRegistration(data, "")
	if err != nil {
		return err
	}
	*r = d
	return nil
}

// DecodeRegistration reads a registration file's content as TAPPaaS does:
// a missing name is the file's stem (fileStem; "" when there is none),
// MACs are normalised again, a missing boot_disk is "sda", and unknown
// keys are kept in Extra. A name that differs from a non-empty fileStem
// is refused, since the file would then answer for another name. The
// result is validated with [Registration.Validate]; errors wrap
// [ErrInvalidRegistration].
func DecodeRegistration(data []byte, fileStem string) (Registration, error) {
	var w registrationJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return Registration{}, invalid(ErrInvalidRegistration, "registration is not valid JSON of the registration format: %v", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Registration{}, invalid(ErrInvalidRegistration, "registration is not a JSON object: %v", err)
	}
	r := Registration{Name: w.Name, MACs: w.MACs, Pools: w.Pools, Serial: w.Serial, UUID: w.UUID, SSHKeys: w.SSHKeys}
	if r.Name == "" {
		r.Name = fileStem
	}
	if fileStem != "" && r.Name != fileStem {
		return Registration{}, invalid(ErrInvalidName, "registration name %q does not match its file name %q", r.Name, fileStem+".json")
	}
	bd := "sda"
	if w.BootDisk != nil {
		bd = *w.BootDisk
	}
	var err error
	if r.BootDisk, err = ParseBootDisk(bd); err != nil {
		return Registration{}, err
	}
	if r.Created, err = parseTime("created", w.Created); err != nil {
		return Registration{}, err
	}
	if w.ConsumedAt != "" || w.InstallIP != nil || len(w.ConsumedMACs) > 0 || w.ConsumedSerial != "" || w.ConsumedUUID != "" {
		c := &ConsumeRecord{MACs: w.ConsumedMACs, Serial: w.ConsumedSerial, UUID: w.ConsumedUUID}
		if w.InstallIP != nil {
			c.ClientIP = *w.InstallIP
		}
		if c.Time, err = parseTime("consumed_at", w.ConsumedAt); err != nil {
			return Registration{}, err
		}
		if len(c.MACs) == 0 {
			c.MACs = nil
		}
		r.Consumed = c
	}
	for k, v := range raw {
		if !slices.Contains(knownKeys, k) {
			if r.Extra == nil {
				r.Extra = map[string]json.RawMessage{}
			}
			var c bytes.Buffer
			if err := json.Compact(&c, v); err != nil {
				return Registration{}, invalid(ErrInvalidRegistration, "registration key %q: %v", k, err)
			}
			r.Extra[k] = c.Bytes()
		}
	}
	if r, err = r.normalize(); err != nil {
		return Registration{}, err
	}
	if err := r.Validate(); err != nil {
		return Registration{}, err
	}
	return r, nil
}

// encodeRegistration returns a registration file's bytes: JSON indented by
// two spaces plus a newline, as TAPPaaS writes it.
func encodeRegistration(r Registration) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encode registration %s: %w", r.Name, err)
	}
	return buf.Bytes(), nil
}

// File names in the registrations folder.
const (
	registrationsDirName = "registrations"
	pendingSuffix        = ".json"
	consumedSuffix       = ".json.consumed"
	claimInfix           = ".json.claim-"
	lockName             = ".lock"
	maxRegistrationSize  = 1 << 20
)

// Registry is the registrations folder, <state-dir>/registrations/: one
// <name>.json per pending registration, <name>.json.consumed once served.
// Its methods are safe for concurrent use, also by several processes
// (writers take a lock file in the folder).
type Store struct {
	dir string
	log *slog.Logger
	mu  sync.Mutex // serialises this process's lock holders
}

// OpenRegistry opens <stateDir>/registrations/, creating it (and stateDir)
// with mode 0700 if needed. When no other process is writing, it removes
// temporary files a killed writer left and recovers an interrupted
// [Registry.Consume]. log may be nil.
func Open(stateDir string, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := filepath.Join(stateDir, registrationsDirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open registrations %s: %w", dir, err)
	}
	g := &Store{dir: dir, log: log}
	lk, err := lockfile.TryLock(g.lockPath(), "node-provisioner registry")
	if errors.Is(err, lockfile.ErrLocked) {
		return g, nil // the holder cleans up after itself
	}
	if err != nil {
		return nil, fmt.Errorf("open registrations %s: %w", dir, err)
	}
	defer lk.Unlock()
	if err := g.cleanLocked(); err != nil {
		return nil, err
	}
	return g, nil
}

// Dir returns the registrations folder.
func (g *Store) Dir() string { return g.dir }

func (g *Store) lockPath() string                { return filepath.Join(g.dir, lockName) }
func (g *Store) pendingPath(name string) string  { return filepath.Join(g.dir, name+pendingSuffix) }
func (g *Store) consumedPath(name string) string { return filepath.Join(g.dir, name+consumedSuffix) }

// lock takes this process's mutex and the folder's lock file; the
// returned func releases both.
func (g *Store) lock(ctx context.Context, who string) (func(), error) {
	g.mu.Lock()
	lk, err := lockfile.Acquire(ctx, g.lockPath(), who, 5*time.Millisecond)
	if err != nil {
		g.mu.Unlock()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("lock registrations %s: %w: %w", g.dir, ctxErr, err)
		}
		return nil, fmt.Errorf("lock registrations %s: %w", g.dir, err)
	}
	return func() {
		lk.Unlock()
		g.mu.Unlock()
	}, nil
}

// cleanLocked runs with the lock held: it removes temporary files and
// recovers interrupted consumptions.
func (g *Store) cleanLocked() error {
	if err := atomicfile.CleanTemp(g.dir); err != nil {
		return err
	}
	return g.recoverClaims()
}

// Put writes a registration as <name>.json, replacing one of the same
// name (replaced is then true and a warning is logged). The MACs are
// normalised and deduplicated, Created is set to now when zero and
// Consumed is cleared. A name whose earlier registration was consumed
// becomes pending again; its .consumed record stays until this one is
// consumed in turn. Errors from validation wrap the sentinels listed at
// [ErrInvalidRegistration].
func (g *Store) Put(ctx context.Context, r Registration) (replaced bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("put registration %s: %w", r.Name, err)
	}
	r, err = r.normalize()
	if err != nil {
		return false, err
	}
	if r.Created.IsZero() {
		r.Created = time.Now().UTC().Truncate(time.Second)
	}
	r.Consumed = nil
	if err := r.Validate(); err != nil {
		return false, err
	}
	if err := ValidateHostname(r.Name); err != nil {
		return false, err
	}
	data, err := encodeRegistration(r)
	if err != nil {
		return false, err
	}
	unlock, err := g.lock(ctx, "node-provisioner register "+r.Name)
	if err != nil {
		return false, err
	}
	defer unlock()
	path := g.pendingPath(r.Name)
	if _, err := os.Lstat(path); err == nil {
		replaced = true
	}
	if err := atomicfile.WriteFile(path, data, 0o600); err != nil {
		return false, fmt.Errorf("put registration %s: %w", r.Name, err)
	}
	if replaced {
		g.log.Warn("registration replaced", "node", r.Name, "file", path)
	} else {
		g.log.Info("registration written", "node", r.Name, "file", path)
	}
	if _, err := os.Lstat(g.consumedPath(r.Name)); err == nil {
		g.log.Info("registration was consumed before and is pending again", "node", r.Name)
	}
	return replaced, nil
}

// Get returns the pending registration name, or an error wrapping
// [ErrNotFound] (or [ErrInvalidName] for a bad name).
func (g *Store) Get(ctx context.Context, name string) (Registration, error) {
	if err := ctx.Err(); err != nil {
		return Registration{}, fmt.Errorf("get registration %s: %w", name, err)
	}
	if err := ValidateName(name); err != nil {
		return Registration{}, err
	}
	r, err := g.readFile(g.pendingPath(name), name)
	if errors.Is(err, os.ErrNotExist) {
		return Registration{}, fmt.Errorf("%w named %q", ErrNotFound, name)
	}
	return r, err
}

// Delete removes the pending registration name. An unknown name gives an
// error wrapping [ErrNotFound]. A consumed record is kept.
func (g *Store) Delete(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete registration %s: %w", name, err)
	}
	if err := ValidateName(name); err != nil {
		return err
	}
	path := g.pendingPath(name)
	if err := os.Remove(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w named %q", ErrNotFound, name)
		}
		return fmt.Errorf("delete registration %s: %w", name, err)
	}
	g.log.Info("registration deleted", "node", name, "file", path)
	return atomicfile.SyncDir(g.dir)
}

// Pending returns the pending registrations sorted by name. Temporary,
// consumed and claimed files are not pending; a file that cannot be read
// or parsed is skipped with a warning naming it.
func (g *Store) Pending(ctx context.Context) ([]Registration, error) {
	return g.list(ctx, pendingSuffix)
}

// Consumed returns the consumed registrations (<name>.json.consumed)
// sorted by name, each with Consumed set (empty for a TAPPaaS file that
// recorded nothing). Unreadable files are skipped with a warning.
func (g *Store) Consumed(ctx context.Context) ([]Registration, error) {
	rs, err := g.list(ctx, consumedSuffix)
	for i := range rs {
		if rs[i].Consumed == nil {
			rs[i].Consumed = &ConsumeRecord{}
		}
	}
	return rs, err
}

func (g *Store) list(ctx context.Context, suffix string) ([]Registration, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list registrations %s: %w", g.dir, err)
	}
	ents, err := os.ReadDir(g.dir)
	if err != nil {
		return nil, fmt.Errorf("list registrations %s: %w", g.dir, err)
	}
	var out []Registration
	for _, e := range ents {
		base := e.Name()
		if !strings.HasSuffix(base, suffix) || strings.HasPrefix(base, ".") || atomicfile.IsTemp(base) {
			continue
		}
		stem := strings.TrimSuffix(base, suffix)
		path := filepath.Join(g.dir, base)
		if suffix == pendingSuffix && strings.HasSuffix(stem, ".json") {
			continue // not <name>.json
		}
		if err := ValidateName(stem); err != nil {
			g.log.Warn("skipping registration file with a bad name", "file", path, "err", err)
			continue
		}
		r, err := g.readFile(path, stem)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) { // consumed meanwhile
				g.log.Warn("skipping unreadable registration", "file", path, "err", err)
			}
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// readFile reads and decodes one registration file; a missing file gives
// an error matching os.ErrNotExist.
func (g *Store) readFile(path, stem string) (Registration, error) {
	f, err := os.Open(path)
	if err != nil {
		return Registration{}, fmt.Errorf("read registration %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRegistrationSize+1))
	if err != nil {
		return Registration{}, fmt.Errorf("read registration %s: %w", path, err)
	}
	if len(data) > maxRegistrationSize {
		return Registration{}, fmt.Errorf("read registration %s: %w", path, invalid(ErrInvalidRegistration, "larger than %d bytes", maxRegistrationSize))
	}
	r, err := DecodeRegistration(data, stem)
	if err != nil {
		return Registration{}, fmt.Errorf("read registration %s: %w", path, err)
	}
	return r, nil
}

// AsksForBootDisk reports whether a pending registration leaves its boot
// disk to the installer's console ("ask"): boot assets must then be
// prepared with the console prompt patched in.
func (g *Store) AsksForBootDisk(ctx context.Context) (bool, error) {
	pending, err := g.Pending(ctx)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(pending, func(r Registration) bool { return r.BootDisk.Kind == BootDiskAsk }), nil
}
