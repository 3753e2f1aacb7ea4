package answer

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Proxmox VE installer release: major and minor, as the
// installer reports its ISO in the system-info field iso.release ("8.2",
// "9.1"), and optionally the patch level of the installer package
// ("8.3.3"). It decides which answer keys exist, how they are spelled and
// which values are accepted.
//
// The answer dialect changes with the ISO releases (MAJOR.MINOR); a few
// rules changed within a series, at a package release (upper-case RAID
// levels are read from 8.3.3). A version without a patch level is read as
// the series' first package, MAJOR.MINOR.0: an installer request names no
// patch level, so for it such a rule holds from the next series on, the
// conservative reading. Package versions and ISO releases are not the same
// numbers at the edges (package 8.2.7 shipped on the 8.3-1 ISO); the rules
// that come with an ISO release are keyed to MAJOR.MINOR.0.
//
// Versions compare with the ordinary operators: Version84 > Version833 >
// Version83. The zero value means "unknown"; use [DefaultVersion] in its
// place.
type Version uint32

// Installer releases whose answer-file dialect differs from the one before.
const (
	// Version82 is the first release with the automated installer: snake_case
	// keys, no first-boot hook, no post-installation webhook, no hashed
	// password, and no btrfs.compress.
	Version82 Version = 8<<16 | 2<<8
	// Version83 (ISO 8.3-1) adds [first-boot] (keys in kebab-case),
	// [post-installation-webhook] (keys still snake_case),
	// root_password_hashed and btrfs.compress.
	Version83 Version = 8<<16 | 3<<8
	// Version833 (package 8.3.3) reads the RAID levels in upper case too
	// ("RAID1", "RAIDZ-1").
	Version833 Version = 8<<16 | 3<<8 | 3
	// Version84 makes kebab-case the canonical spelling of every key (the
	// snake_case spellings stay as aliases), requires root-password to have at
	// least 8 characters, and adds reboot-mode and fqdn from DHCP.
	Version84 Version = 8<<16 | 4<<8
	// Version90 warns about snake_case keys in validate-answer; the dialect is
	// otherwise that of 8.4.
	Version90 Version = 9 << 16
	// Version91 adds network.interface-name-pinning.
	Version91 Version = 9<<16 | 1<<8
	// Version92 adds subscription-key and post-installation-webhook.auth-token
	// (and its alias auth_token), makes network.source required, and sends
	// upper-case MACs in the system-info payload.
	Version92 Version = 9<<16 | 2<<8
)
const (
	// MinVersion is the oldest installer this package renders answers for:
	// the automated installer first shipped with Proxmox VE 8.2.
	MinVersion = Version82

	// LatestVersion is the newest installer release whose answer format this
	// package knows. Newer releases are rendered with its dialect.
	LatestVersion = Version92

	// DefaultVersion is the version to assume when a request carries none
	// (no iso.release in the system info).
	//
	// It is the oldest supported release, 8.2, and not the newest, because
	// the installer rejects keys it does not know: an 8.2-dialect answer
	// (snake_case keys, plain root password, no [first-boot]) is parsed by
	// every released installer from 8.2 to 9.2, which keep the snake_case
	// spellings as aliases, while a 9.2-dialect answer fails on 8.2 and 8.3.
	// Every real installer sends iso.release, so the default only matters for
	// hand-made requests. Use a root password of at least 8 characters, as
	// 8.4 and later require it.
	DefaultVersion = Version82

	// kebabSince is the release from which keys are spelled in kebab-case,
	// and from which the snake_case spellings stay accepted as aliases.
	kebabSince = Version84
)

// ParseVersion parses an installer release such as "8.2" (the form of the
// system-info field iso.release), an ISO name such as "8.3-1" whose "-N"
// ISO respin is ignored, or an installer package version with its patch
// level such as "8.3.3" (see [Version] for how the two relate).
//
// ParseVersion does not check that the installer is supported: compare the
// result with [MinVersion].
func ParseVersion(s string) (Version, error) {
	in := strings.TrimSpace(s)
	if i := strings.IndexByte(in, '-'); i >= 0 {
		if _, err := strconv.ParseUint(in[i+1:], 10, 16); err != nil {
			return 0, fmt.Errorf("parse installer version %q: want MAJOR.MINOR like \"8.2\", an ISO name like \"8.3-1\" or MAJOR.MINOR.PATCH like \"8.3.3\"", s)
		}
		in = in[:i]
	}
	parts := strings.Split(in, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("parse installer version %q: want MAJOR.MINOR like \"8.2\" or MAJOR.MINOR.PATCH like \"8.3.3\"", s)
	}
	var n [3]uint64
	for i, p := range parts {
		x, err := strconv.ParseUint(p, 10, 8)
		if err != nil {
			return 0, fmt.Errorf("parse installer version %q: want MAJOR.MINOR[.PATCH] with numbers from 0 to 255 and a major from 1, like \"8.2\"", s)
		}
		n[i] = x
	}
	if n[0] == 0 {
		return 0, fmt.Errorf("parse installer version %q: want MAJOR.MINOR[.PATCH] with numbers from 0 to 255 and a major from 1, like \"8.2\"", s)
	}
	return Version(n[0]<<16 | n[1]<<8 | n[2]), nil
}

// Major returns the major release number, 9 for 9.2.
func (v Version) Major() int { return int(v >> 16) }

// Minor returns the minor release number, 2 for 9.2.
func (v Version) Minor() int { return int(v >> 8 & 0xff) }

// Patch returns the patch level of the installer package, 3 for 8.3.3 and
// 0 when none was given.
func (v Version) Patch() int { return int(v & 0xff) }

// String returns the release as MAJOR.MINOR, MAJOR.MINOR.PATCH when it has
// a patch level, or "unknown" for the zero value.
func (v Version) String() string {
	if v == 0 {
		return "unknown"
	}
	s := strconv.Itoa(v.Major()) + "." + strconv.Itoa(v.Minor())
	if v.Patch() != 0 {
		s += "." + strconv.Itoa(v.Patch())
	}
	return s
}

// AtLeast reports whether v is w or newer.
func (v Version) AtLeast(w Version) bool { return v >= w }

// Supported reports whether this package can render answers for v: v is
// [MinVersion] or newer. Releases newer than [LatestVersion] are supported
// with the dialect of LatestVersion.
func (v Version) Supported() bool { return v >= MinVersion }

// KebabCase reports whether v spells answer keys in kebab-case (8.4 and
// later) rather than snake_case.
func (v Version) KebabCase() bool { return v >= kebabSince }

// keyRule is a row of the schema compiled with its table: the key's path
// and type, the releases knowing it, and its spellings. The schema tables
// (schema_keys.go) are the source; keyRules lists them all.
type keyRule struct {
	// path is the canonical (kebab-case) dotted path: "global.root-password".
	path string
	typ  ValueType
	// since is the first installer release that knows the key; until the
	// last one, zero for no last one.
	since, until Version
	// legacy is the spelling of the last path element before its table
	// went kebab-case (8.4), when it differs from the kebab-case one:
	// "root_password".
	legacy string
	// alias says that from 8.4 another spelling is accepted too.
	alias bool
	// names are the spellings with the first release accepting each, the
	// canonical one first.
	names []spelling
}

// spelling is one accepted spelling of a key and the first release
// accepting it.
type spelling struct {
	name  string
	since Version
}

// newKeyRule compiles a row of a table whose keys are kebab-case from
// release kebab: a key with an alias that is older than that was spelled
// as its alias only, and gets its kebab-case spelling then; a newer one
// has its kebab-case spelling from the start and the alias from 8.4, when
// installers began accepting both.
func newKeyRule(path, alias string, typ ValueType, first, last, kebab Version) keyRule {
	r := keyRule{path: path, typ: typ, since: first, until: last}
	key := lastElem(path)
	switch {
	case alias == "":
		r.names = []spelling{{key, first}}
	case first < kebab:
		r.legacy, r.alias = alias, true
		r.names = []spelling{{key, kebab}, {alias, first}}
	default:
		r.alias = true
		r.names = []spelling{{key, first}, {alias, max(first, kebabSince)}}
	}
	return r
}

// knownTo reports whether installer v knows the key, in some spelling.
func (r keyRule) knownTo(v Version) bool {
	return v >= r.since && (r.until == 0 || v <= r.until)
}

// name returns the last path element of r spelled as installer v writes
// it.
func (r keyRule) name(v Version) string {
	if a := r.accepts(v); len(a) > 0 {
		return a[0]
	}
	return lastElem(r.path)
}

// accepts returns the spellings of r that installer v accepts, the one it
// renders first; nil when v does not know the key.
func (r keyRule) accepts(v Version) []string {
	if !r.knownTo(v) {
		return nil
	}
	var out []string
	for _, s := range r.names {
		if v >= s.since {
			out = append(out, s.name)
		}
	}
	return out
}

// aliasName returns the key's other spelling, or "".
func (r keyRule) aliasName() string {
	if r.alias && len(r.names) > 1 {
		return r.names[1].name
	}
	return ""
}

// unsupported returns the error for the key, spelled as name, at installer
// v, which does not accept that spelling; since is the spelling's first
// release.
func (r keyRule) unsupported(name string, since, v Version) *UnsupportedError {
	e := &UnsupportedError{Key: joinPath(parentPath(r.path), name), Since: since, Version: v}
	if r.until != 0 && v > r.until {
		e.Until = r.until
	}
	return e
}

// lastElem returns the part of a dotted path after its last dot.
func lastElem(path string) string {
	return path[strings.LastIndexByte(path, '.')+1:]
}

// parentPath returns the part of a dotted path before its last dot, "" for
// a top-level section.
func parentPath(path string) string {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return ""
	}
	return path[:i]
}
