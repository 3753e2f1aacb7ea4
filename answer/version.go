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

	// kebabSince is the release from which keys are spelled in kebab-case.
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

// keyRule records when an answer key appeared and how it was spelled.
type keyRule struct {
	// path is the canonical (kebab-case) dotted path: "global.root-password".
	path string
	// since is the first installer release that knows the key.
	since Version
	// legacy is the spelling of the last path element before 8.4, when it
	// differs from the kebab-case one: "root_password".
	legacy string
	// alias says that from 8.4 the snake_case spelling is accepted too.
	alias bool
}

// keyRules lists every key and section of the answer file. It is read-only.
var keyRules = []keyRule{
	{path: "global", since: Version82},
	{path: "global.keyboard", since: Version82},
	{path: "global.country", since: Version82},
	{path: "global.fqdn", since: Version82},
	{path: "global.fqdn.source", since: Version84},
	{path: "global.fqdn.domain", since: Version84},
	{path: "global.mailto", since: Version82},
	{path: "global.timezone", since: Version82},
	{path: "global.root-password", since: Version82, legacy: "root_password", alias: true},
	{path: "global.root-password-hashed", since: Version83, legacy: "root_password_hashed", alias: true},
	{path: "global.reboot-on-error", since: Version82, legacy: "reboot_on_error", alias: true},
	{path: "global.reboot-mode", since: Version84, alias: true},
	{path: "global.root-ssh-keys", since: Version82, legacy: "root_ssh_keys", alias: true},
	{path: "global.subscription-key", since: Version92, alias: true},

	{path: "network", since: Version82},
	{path: "network.source", since: Version82},
	{path: "network.cidr", since: Version82},
	{path: "network.dns", since: Version82},
	{path: "network.gateway", since: Version82},
	{path: "network.filter", since: Version82},
	{path: "network.interface-name-pinning", since: Version91},
	{path: "network.interface-name-pinning.enabled", since: Version91},
	{path: "network.interface-name-pinning.mapping", since: Version91},

	{path: "disk-setup", since: Version82},
	{path: "disk-setup.filesystem", since: Version82},
	{path: "disk-setup.disk-list", since: Version82, legacy: "disk_list", alias: true},
	{path: "disk-setup.filter", since: Version82},
	{path: "disk-setup.filter-match", since: Version82, legacy: "filter_match", alias: true},
	{path: "disk-setup.zfs", since: Version82},
	{path: "disk-setup.zfs.raid", since: Version82},
	{path: "disk-setup.zfs.ashift", since: Version82},
	{path: "disk-setup.zfs.arc-max", since: Version82, legacy: "arc_max", alias: true},
	{path: "disk-setup.zfs.checksum", since: Version82},
	{path: "disk-setup.zfs.compress", since: Version82},
	{path: "disk-setup.zfs.copies", since: Version82},
	{path: "disk-setup.zfs.hdsize", since: Version82},
	{path: "disk-setup.lvm", since: Version82},
	{path: "disk-setup.lvm.hdsize", since: Version82},
	{path: "disk-setup.lvm.swapsize", since: Version82},
	{path: "disk-setup.lvm.maxroot", since: Version82},
	{path: "disk-setup.lvm.maxvz", since: Version82},
	{path: "disk-setup.lvm.minfree", since: Version82},
	{path: "disk-setup.btrfs", since: Version82},
	{path: "disk-setup.btrfs.raid", since: Version82},
	{path: "disk-setup.btrfs.hdsize", since: Version82},
	{path: "disk-setup.btrfs.compress", since: Version83},

	{path: "post-installation-webhook", since: Version83},
	{path: "post-installation-webhook.url", since: Version83},
	{path: "post-installation-webhook.cert-fingerprint", since: Version83, legacy: "cert_fingerprint", alias: true},
	{path: "post-installation-webhook.auth-token", since: Version92},

	{path: "first-boot", since: Version83},
	{path: "first-boot.source", since: Version83},
	{path: "first-boot.ordering", since: Version83},
	{path: "first-boot.url", since: Version83},
	{path: "first-boot.cert-fingerprint", since: Version83, alias: true},
}

// rule returns the rule for a canonical path. Asking for a path missing from
// keyRules is a programming error in this package, reported by the tests.
func rule(path string) keyRule {
	for _, r := range keyRules {
		if r.path == path {
			return r
		}
	}
	return keyRule{path: path, since: LatestVersion + 1}
}

// name returns the last path element of r spelled as installer v expects.
func (r keyRule) name(v Version) string {
	if !v.KebabCase() && r.legacy != "" {
		return r.legacy
	}
	return lastElem(r.path)
}

// spelling is one accepted spelling of a key and the first release
// accepting it.
type spelling struct {
	name  string
	since Version
}

// spellings returns every spelling of r that some installer accepts, with
// the first release accepting each.
func (r keyRule) spellings() []spelling {
	kebab := lastElem(r.path)
	if r.legacy != "" {
		return []spelling{{r.legacy, r.since}, {kebab, max(r.since, kebabSince)}}
	}
	out := []spelling{{kebab, r.since}}
	if snake := strings.ReplaceAll(kebab, "-", "_"); r.alias && snake != kebab {
		out = append(out, spelling{snake, max(r.since, kebabSince)})
	}
	return out
}

// accepts returns the spellings of r that installer v accepts, the one it
// renders first; nil when v does not know the key.
func (r keyRule) accepts(v Version) []string {
	if v < r.since {
		return nil
	}
	var out []string
	for _, s := range r.spellings() {
		if v >= s.since {
			out = append(out, s.name)
		}
	}
	if len(out) > 1 && out[0] != r.name(v) {
		out[0], out[1] = out[1], out[0]
	}
	return out
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
