package answer

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Proxmox VE installer (ISO) release, major and minor, as the
// installer reports it in the system-info field iso.release ("8.2", "9.1").
// It decides which answer keys exist and how they are spelled.
//
// Versions compare with the ordinary operators: Version84 > Version83. The
// zero value means "unknown"; use [DefaultVersion] in its place.
type Version uint16

// Installer releases whose answer-file dialect differs from the one before.
const (
	// Version82 is the first release with the automated installer: snake_case
	// keys, no first-boot hook, no post-installation webhook, no hashed
	// password, and no btrfs.compress.
	Version82 Version = 8<<8 | 2
	// Version83 (ISO 8.3-1) adds [first-boot] (keys in kebab-case),
	// [post-installation-webhook] (keys still snake_case),
	// root_password_hashed and btrfs.compress.
	Version83 Version = 8<<8 | 3
	// Version84 makes kebab-case the canonical spelling of every key (the
	// snake_case spellings stay as aliases), requires root-password to have at
	// least 8 characters, and adds reboot-mode and fqdn from DHCP.
	Version84 Version = 8<<8 | 4
	// Version90 warns about snake_case keys in validate-answer; the dialect is
	// otherwise that of 8.4.
	Version90 Version = 9<<8 | 0
	// Version91 adds network.interface-name-pinning.
	Version91 Version = 9<<8 | 1
	// Version92 adds subscription-key and post-installation-webhook.auth-token,
	// makes network.source required, and sends upper-case MACs in the
	// system-info payload.
	Version92 Version = 9<<8 | 2
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
// system-info field iso.release), or an ISO name such as "8.3-1" whose "-N"
// ISO respin is ignored. It rejects a package version with a patch level
// ("8.2.7"): package and ISO numbers differ (package 8.2.7 shipped on the
// 8.3-1 ISO).
//
// ParseVersion does not check that the installer is supported: compare the
// result with [MinVersion].
func ParseVersion(s string) (Version, error) {
	in := strings.TrimSpace(s)
	if i := strings.IndexByte(in, '-'); i >= 0 {
		if _, err := strconv.ParseUint(in[i+1:], 10, 16); err != nil {
			return 0, fmt.Errorf("parse installer version %q: want MAJOR.MINOR like \"8.2\" or an ISO name like \"8.3-1\"", s)
		}
		in = in[:i]
	}
	major, minor, ok := strings.Cut(in, ".")
	if !ok || strings.Contains(minor, ".") {
		return 0, fmt.Errorf("parse installer version %q: want MAJOR.MINOR like \"8.2\" (an ISO release, not a package version)", s)
	}
	ma, err1 := strconv.ParseUint(major, 10, 8)
	mi, err2 := strconv.ParseUint(minor, 10, 8)
	if err1 != nil || err2 != nil || ma == 0 {
		return 0, fmt.Errorf("parse installer version %q: want MAJOR.MINOR with numbers from 1.0 to 255.255, like \"8.2\"", s)
	}
	return Version(ma<<8 | mi), nil
}

// Major returns the major release number, 9 for 9.2.
func (v Version) Major() int { return int(v >> 8) }

// Minor returns the minor release number, 2 for 9.2.
func (v Version) Minor() int { return int(v & 0xff) }

// String returns the release as MAJOR.MINOR, or "unknown" for the zero
// value.
func (v Version) String() string {
	if v == 0 {
		return "unknown"
	}
	return strconv.Itoa(v.Major()) + "." + strconv.Itoa(v.Minor())
}

// Compare returns -1, 0 or +1 as v is older than, the same as, or newer
// than w.
func (v Version) Compare(w Version) int {
	switch {
	case v < w:
		return -1
	case v > w:
		return 1
	}
	return 0
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

// rule returns the rule for a canonical path; a path missing from the
// schema is known to no version.
func rule(path string) keyRule {
	for _, r := range keyRules {
		if r.path == path {
			return r
		}
	}
	return keyRule{path: path, since: LatestVersion + 1}
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
