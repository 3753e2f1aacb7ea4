package answer

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
)

// The checks of single values, used in the schema's rows. A textCheck
// returning false skips the checks after it.

// required checks that the string is set and is text.
func required(c *checker, path, s string) bool { return c.required(path, s) }

// requiredAs is required, naming the valid values when the string is
// missing.
func requiredAs(valid string) textCheck {
	return func(c *checker, path, s string) bool {
		if s == "" {
			c.bad(path, "required: %s", valid)
			return false
		}
		return c.text(path, s)
	}
}

// present goes on with the checks after it only for a string that is set
// and is text.
func present(c *checker, path, s string) bool { return s != "" && c.text(path, s) }

// textOnly checks that the string is text.
func textOnly(c *checker, path, s string) bool { return c.text(path, s) }

// oneOf checks that the string, if set, is one of the valid values.
func oneOf[T ~string](valid ...T) textCheck {
	names := make([]string, len(valid))
	for i, v := range valid {
		names[i] = string(v)
	}
	return func(c *checker, path, s string) bool {
		c.oneOf(path, s, names...)
		return true
	}
}

// pattern checks the string against re, saying what is wanted.
func pattern(re *regexp.Regexp, want string) textCheck {
	return func(c *checker, path, s string) bool {
		if !re.MatchString(s) {
			c.bad(path, "%q: want %s", s, want)
			return false
		}
		return true
	}
}

// passwordLength checks the 8.4 minimum length of a plain root password.
// The installer counts bytes (Rust's str::len), not characters: "äääá"
// (4 characters, 8 bytes) passes.
func passwordLength(c *checker, path, s string) bool {
	if c.v.AtLeast(Version84) && len(s) < 8 {
		c.bad(path, "`global.root-password` must be at least 8 characters long")
	}
	return true
}

// cryptHash checks the form of a crypt(3) hash.
func cryptHash(c *checker, path, h string) bool {
	ok := len(h) > 3 && h[0] == '$' && strings.IndexByte(h[1:], '$') > 0 &&
		!strings.ContainsFunc(h, func(r rune) bool { return r <= ' ' || r > '~' || r == ':' })
	if !ok {
		c.bad(path, "not a crypt(3) hash: want \"$id$salt$hash\" (see HashPassword) without spaces or colons")
	}
	return true
}

// subscriptionKey checks the form of a subscription key.
func subscriptionKey(c *checker, path, s string) bool {
	if !subscriptionRe.MatchString(s) {
		c.bad(path, "not a subscription key: want the form pve4c-0123456789 (pveN, pbs or pmg, a level letter c/b/s/p, and 10 hex digits)")
	}
	return true
}

// httpURL checks an http(s) URL.
func httpURL(isRequired bool) textCheck {
	return func(c *checker, path, s string) bool {
		c.url(path, s, isRequired)
		return true
	}
}

// fingerprint checks a SHA-256 certificate fingerprint.
func fingerprint(c *checker, path, s string) bool {
	c.fingerprint(path, s)
	return true
}

// sshKeys checks public key lines.
func sshKeys(c *checker, path string, keys []string) {
	for i, k := range keys {
		p := fmt.Sprintf("%s[%d]", path, i)
		if c.required(p, k) && len(strings.Fields(k)) < 2 {
			c.bad(p, "%q: want an OpenSSH public key line such as \"ssh-ed25519 AAAA... comment\"", k)
		}
	}
}

// diskNames checks kernel device names, each listed once.
func diskNames(c *checker, path string, disks []string) {
	seen := map[string]bool{}
	for i, disk := range disks {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case !c.required(p, disk):
		case strings.ContainsAny(disk, "/ "):
			c.bad(p, "%q: want a kernel device name such as \"sda\" or \"nvme0n1\"", disk)
		case seen[disk]:
			c.bad(path, "List of disks contains duplicate device %s", disk)
		}
		seen[disk] = true
	}
}

// udevFilter checks a udev filter table.
func udevFilter(c *checker, path string, f map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(f)) {
		kp := fmt.Sprintf("%s.%q", path, k)
		if k == "" {
			c.bad(path, "an empty udev property name")
			continue
		}
		if c.text(kp, k) {
			c.required(kp, f[k])
		}
	}
}

// pinnedNames checks a MAC-to-interface-name mapping.
func pinnedNames(c *checker, path string, mapping map[string]string) {
	macs := map[string]bool{}
	names := map[string]string{}
	for _, mac := range slices.Sorted(maps.Keys(mapping)) {
		name := mapping[mac]
		p := fmt.Sprintf("%s.%q", path, mac)
		if !c.text(p, mac) {
			continue
		}
		m, ok := canonicalMAC(mac)
		switch {
		case !ok:
			c.bad(p, "%q: want a MAC address such as \"24:8a:07:1e:05:bc\"", mac)
		case macs[m]:
			c.bad(p, "MAC %s is mapped twice", m)
		}
		macs[m] = true
		if !c.required(p, name) {
			continue
		}
		lower := strings.ToLower(name)
		switch {
		case len(name) > maxIfaceName:
			c.bad(p, "interface name '%s' for '%s' cannot be longer than 15 characters", name, m)
		case !ifaceNameRe.MatchString(name):
			c.bad(p, "interface name %q: %s", name, ifaceNameRule)
		case names[lower] != "":
			c.bad(p, "interface name %q is also given to %s", name, names[lower])
		}
		names[lower] = m
	}
}

// intRange checks an integer from lo to hi.
func intRange(lo, hi int) func(c *checker, path string, p *int) {
	return func(c *checker, path string, p *int) {
		if p != nil && (*p < lo || *p > hi) {
			if hi == math.MaxInt32 {
				c.bad(path, "%d: want at least %d", *p, lo)
				return
			}
			c.bad(path, "%d: want %d to %d", *p, lo, hi)
		}
	}
}

// size checks a size in GiB: finite, not negative, and above zero if
// positive is set.
func size(positive bool) func(c *checker, path string, p *float64) {
	return func(c *checker, path string, p *float64) {
		switch {
		case p == nil:
		case math.IsNaN(*p) || math.IsInf(*p, 0):
			c.bad(path, "want a number of GiB, not %g", *p)
		case positive && *p <= 0:
			c.bad(path, "%g: want a size above 0 GiB", *p)
		case *p < 0:
			c.bad(path, "%g: want a size of 0 GiB or more", *p)
		}
	}
}

// maxIfaceName is the longest interface name the installer pins (its
// MAX_IFNAME_LEN, the kernel's IFNAMSIZ less one); ifaceNameRe sets the
// shortest, 2.
const maxIfaceName = 15

// ifaceNameRule says what ifaceNameRe wants.
const ifaceNameRule = `want a letter, then letters, digits or _, optionally :N or .N, such as "lan0"`

// CheckInterfaceName checks an interface name as the installer checks
// those of network.interface-name-pinning.mapping (pve-iface's rule): 2 to
// 15 characters, a letter, then letters, digits or _, optionally :N or .N;
// without case. The error wraps [ErrInvalid].
func CheckInterfaceName(name string) error {
	switch {
	case len(name) > maxIfaceName:
		return fmt.Errorf("%w: interface name %q: at most %d characters", ErrInvalid, name, maxIfaceName)
	case !ifaceNameRe.MatchString(name):
		return fmt.Errorf("%w: interface name %q: %s", ErrInvalid, name, ifaceNameRule)
	}
	return nil
}
