package answer

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every error for an answer that breaks the
// installer's rules (or this package's stricter ones); the message names
// the key, in its canonical kebab-case spelling.
var ErrInvalid = errors.New("invalid answer")

// ErrUnsupported is wrapped by every error for something the requesting
// installer version does not know: a key newer than the version (see
// [UnsupportedError]) or a version older than [MinVersion].
var ErrUnsupported = errors.New("not supported by the installer version")

// UnsupportedError reports an answer key that the installer version does
// not know. It wraps [ErrUnsupported].
type UnsupportedError struct {
	// Key is the dotted path of the key, as spelled in the answer
	// ("global.subscription-key").
	Key string
	// Since is the first installer release knowing the key (in this
	// spelling).
	Since Version
	// Until, when set, is the last installer release knowing the key:
	// Version is newer.
	Until Version
	// Version is the installer release the answer is for.
	Version Version
}

// Error says which key needs which release.
func (e *UnsupportedError) Error() string {
	if e.Until != 0 {
		return fmt.Sprintf("%s is known to installers %s to %s, not %s", e.Key, e.Since, e.Until, e.Version)
	}
	return fmt.Sprintf("%s needs installer %s or later, not %s", e.Key, e.Since, e.Version)
}

// Unwrap returns [ErrUnsupported].
func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// Validate checks a against the rules of installer v and returns every
// problem found, joined.
//
// Problems with a value wrap [ErrInvalid] and name the key; a key that v
// does not know is an [*UnsupportedError] (wrapping [ErrUnsupported]), as is
// a v older than [MinVersion]. Keys newer than v that are set to the value
// the installer assumes when they are absent (reboot-mode "reboot",
// btrfs.compress "off", an empty interface-name-pinning) are not problems:
// [Render] leaves them out. Nor is an answer carrying both a plain and a
// hashed root password: Render picks the one v takes (see
// [Global.RootPassword]).
//
// The rules are the installer's (the §1.7 messages where it has them), plus
// a few stricter ones that keep the generated file unambiguous on every
// version: no control characters or invalid UTF-8 in any string; lower-case
// RAID levels in the model ([Decode] reads the upper-case spellings 8.3.3
// accepts into lower case); an even disk count for RAID10 (9.2.6 rejects odd ones);
// from-dhcp takes no cidr, dns, gateway or filter; first-boot.url only with
// from-url; disk names without "/".
func Validate(a *Answer, v Version) error {
	_, err := prepare(a, v, RenderOptions{})
	return err
}

// prepare adapts a copy of a to v (see adapter) and checks the result.
func prepare(a *Answer, v Version, opts RenderOptions) (*Answer, error) {
	if a == nil {
		return nil, fmt.Errorf("%w: the answer is nil", ErrInvalid)
	}
	if err := checkVersion(v); err != nil {
		return nil, err
	}
	b := *a
	ad := &adapter{v: v, drop: opts.DropUnsupported, log: opts.Logger}
	if ad.log == nil {
		ad.log = slog.New(slog.DiscardHandler)
	}
	answerTable.adapt(&b, ad)
	if err := errors.Join(ad.errs...); err != nil {
		return nil, err
	}
	c := checker{v: v}
	answerTable.checkAll(&c, &b)
	return &b, errors.Join(c.errs...)
}

// checkVersion reports a version this package cannot render for.
func checkVersion(v Version) error {
	if v == 0 {
		return fmt.Errorf("%w: installer version unknown (use DefaultVersion, %s, when the request names none)", ErrUnsupported, DefaultVersion)
	}
	if !v.Supported() {
		return fmt.Errorf("%w: installer %s has no automated installer (want %s or later)", ErrUnsupported, v, MinVersion)
	}
	return nil
}

// adapter leaves out of a copy of an answer what installer v does not
// know, walking the schema (table.adapt), by these rules:
//
//   - a key v does not know holding the installer's default (the row's
//     dflt; a table holding only defaults) is left out;
//   - any other such key is an error, or left out (and logged) with
//     RenderOptions.DropUnsupported;
//   - both root passwords set: the hashed one from 8.3, the plain one for
//     8.2; only a hashed one for 8.2 is an error (adaptPasswords);
//   - fqdn from DHCP before 8.4 is an error: global.fqdn is required
//     (fqdnValue.adapt).
//
// It never changes the caller's answer: tables are copied before they are
// changed.
type adapter struct {
	v    Version
	drop bool
	log  *slog.Logger
	errs []error
}

// unsupported records the key as unknown to the version.
func (a *adapter) unsupported(k keyRule) {
	a.errs = append(a.errs, k.unsupported(lastElem(k.path), k.since, a.v))
}

// leaveOut reports whether the key, unknown to the version, is to be left
// out, and records an error when it is not.
func (a *adapter) leaveOut(k keyRule) bool {
	if !a.drop {
		a.unsupported(k)
		return false
	}
	if k.until != 0 && a.v > k.until {
		a.log.Warn("answer key left out: installer too new", "key", k.path, "until", k.until.String(), "version", a.v.String())
		return true
	}
	a.log.Warn("answer key left out: installer too old", "key", k.path, "since", k.since.String(), "version", a.v.String())
	return true
}

// adaptPasswords keeps the root password the installer takes: the hashed
// one where it knows it, else the plain one.
func adaptPasswords(g *Global, a *adapter) {
	if g.RootPasswordHashed != "" && !hashedPassword.knownTo(a.v) {
		if g.RootPassword == "" {
			a.unsupported(hashedPassword)
		}
		g.RootPasswordHashed = ""
	}
	if g.RootPassword != "" && g.RootPasswordHashed != "" {
		g.RootPassword = ""
	}
}

var (
	countryRe  = regexp.MustCompile(`^[a-z]{2}$`)
	timezoneRe = regexp.MustCompile(`^[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*$`)
	// mailtoRe is the "valid e-mail address" rule of the HTML standard, which
	// the installer uses.
	mailtoRe       = regexp.MustCompile("^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$")
	labelRe        = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
	subscriptionRe = regexp.MustCompile(`^(?:pve[0-9]+|pbs|pmg)[cbsp]-[0-9a-f]{10}$`)
	ifaceNameRe    = regexp.MustCompile(`(?i)^[a-z][a-z0-9_]{1,20}([:.][0-9]+)?$`)
	fingerprintRe  = regexp.MustCompile(`^[0-9A-Fa-f]{64}$`)
)

// checker collects the problems of one answer.
type checker struct {
	v    Version
	errs []error
}

// bad records a problem with the key at path.
func (c *checker) bad(path, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%w: %s: %s", ErrInvalid, path, fmt.Sprintf(format, args...)))
}

// text checks that s can be written as a single-line TOML string. Secrets
// are never quoted back.
func (c *checker) text(path, s string) bool {
	switch {
	case !utf8.ValidString(s):
		c.bad(path, "not valid UTF-8")
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		c.bad(path, "contains a control character (newline, tab, ...); no answer field takes one")
	default:
		return true
	}
	return false
}

// required checks that s is set and is text.
func (c *checker) required(path, s string) bool {
	if s == "" {
		c.bad(path, "required")
		return false
	}
	return c.text(path, s)
}

// oneOf checks that s, if set, is one of the valid values.
func (c *checker) oneOf(path, s string, valid ...string) {
	if s != "" && c.text(path, s) && !slices.Contains(valid, s) {
		c.bad(path, "%q: want one of %s", s, strings.Join(valid, ", "))
	}
}

// url checks an http(s) URL.
func (c *checker) url(path, s string, required bool) {
	if s == "" {
		if required {
			c.bad(path, "required")
		}
		return
	}
	if !c.text(path, s) {
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.bad(path, "%q: want an http or https URL such as \"https://prov.example/hook\"", s)
	}
}

// fingerprint checks a SHA-256 certificate fingerprint.
func (c *checker) fingerprint(path, s string) {
	if s != "" && c.text(path, s) && !fingerprintRe.MatchString(strings.ReplaceAll(s, ":", "")) {
		c.bad(path, "%q: want a SHA-256 fingerprint, 64 hex digits with optional colons (openssl x509 -noout -fingerprint -sha256)", s)
	}
}

// fqdn checks global.fqdn (at path) in either form.
func (c *checker) fqdn(path string, f *FQDN) {
	domain := path + ".domain"
	switch {
	case f.FromDHCP && f.Name != "":
		c.bad(path, "set either a name or from DHCP, not both")
	case f.FromDHCP:
		if f.Domain != "" && c.text(domain, f.Domain) && !validDomain(f.Domain, 1) {
			c.bad(domain, "%q: want a domain name such as \"example.com\"", f.Domain)
		}
	case f.Domain != "":
		c.bad(domain, "only with the FQDN from DHCP")
	case f.Name == "":
		c.bad(path, "required: a fully qualified domain name, or from DHCP")
	case !c.text(path, f.Name):
	case !validDomain(f.Name, 2):
		c.bad(path, "%q: want a fully qualified domain name such as \"pve1.example.com\" (a bare host name is rejected)", f.Name)
	case numericHostname(f.Name):
		c.bad(path, "%q: hostname cannot be purely numeric", f.Name)
	}
}

// numericHostname reports whether the first label of fqdn, the host name,
// is all digits ("123" of "123.example"). Every installer refuses such a
// name (its Fqdn type, after Proxmox bug 1054).
func numericHostname(fqdn string) bool {
	host, _, _ := strings.Cut(fqdn, ".")
	return host != "" && strings.Trim(host, "0123456789") == ""
}

// validDomain reports whether s is a DNS name of at least minLabels labels.
func validDomain(s string, minLabels int) bool {
	labels := strings.Split(s, ".")
	if len(s) > 253 || len(labels) < minLabels {
		return false
	}
	for _, l := range labels {
		if !labelRe.MatchString(l) {
			return false
		}
	}
	return true
}

// The rules across keys, each reported at the key the schema gives it.

// checkPasswords: exactly one root password (the installer's messages).
func checkPasswords(c *checker, g *Global) {
	switch {
	case g.RootPassword != "" && g.RootPasswordHashed != "":
		c.bad("global", "`global.root-password` and `global.root-password-hashed` cannot be set at the same time")
	case g.RootPassword == "" && g.RootPasswordHashed == "":
		c.bad("global", "One of `global.root-password` or `global.root-password-hashed` must be set")
	}
}

// checkNetworkSource: network.source decides which other keys are needed
// and allowed.
func checkNetworkSource(c *checker, n *Network) {
	switch n.Source {
	case "":
		c.bad("network.source", "required: %q or %q", NetworkFromDHCP, NetworkFromAnswer)
	case NetworkFromDHCP:
		for _, f := range []struct{ path, value string }{{"network.cidr", n.CIDR}, {"network.dns", n.DNS}, {"network.gateway", n.Gateway}} {
			if f.value != "" {
				c.bad(f.path, "only with source %q", NetworkFromAnswer)
			}
		}
		if len(n.Filter) > 0 {
			c.bad("network.filter", "only with source %q", NetworkFromAnswer)
		}
	case NetworkFromAnswer:
		var prefix netip.Prefix
		if c.required("network.cidr", n.CIDR) {
			p, err := netip.ParsePrefix(n.CIDR)
			if err != nil {
				c.bad("network.cidr", "%q: want an address with prefix length such as \"10.10.10.10/24\"", n.CIDR)
			}
			prefix = p
		}
		if c.required("network.dns", n.DNS) {
			if _, err := netip.ParseAddr(n.DNS); err != nil {
				c.bad("network.dns", "%q: want one IP address such as \"10.10.10.1\"", n.DNS)
			}
		}
		if c.required("network.gateway", n.Gateway) {
			gw, err := netip.ParseAddr(n.Gateway)
			switch {
			case err != nil:
				c.bad("network.gateway", "%q: want an IP address such as \"10.10.10.1\"", n.Gateway)
			case prefix.IsValid() && gw.Is4() != prefix.Addr().Is4():
				c.bad("network.gateway", "%q: not of the address family of network.cidr %q", n.Gateway, n.CIDR)
			}
		}
		if len(n.Filter) == 0 {
			c.bad("network.filter", "required with source %q: a udev property glob selecting the NIC, such as ID_NET_NAME_MAC = \"*a0369f0ab382\"", NetworkFromAnswer)
		}
	default:
		c.oneOf("network.source", string(n.Source), string(NetworkFromDHCP), string(NetworkFromAnswer))
	}
}

// checkPinningEnabled: interface-name-pinning.enabled has no default in
// the installer, so a mapping without it is refused there.
func checkPinningEnabled(c *checker, p *InterfaceNamePinning) {
	if p.Enabled == nil && len(p.Mapping) > 0 {
		c.bad("network.interface-name-pinning.enabled", "required with a mapping: the installer refuses the table without it (missing field `enabled`)")
	}
}

// checkDiskSelection: exactly one of disk-list and filter.
func checkDiskSelection(c *checker, d *DiskSetup) {
	switch {
	case len(d.DiskList) == 0 && len(d.Filter) == 0:
		c.bad("disk-setup", "Need either 'disk-list' or 'filter' set")
	case len(d.DiskList) > 0 && len(d.Filter) > 0:
		c.bad("disk-setup", "Cannot use both, 'disk-list' and 'filter'")
	}
}

// MinDisks is the fewest disks the installer takes for RAID level r
// (its get_min_disks): 1 for raid0 and any level it does not know.
func MinDisks(r RaidLevel) int {
	switch r {
	case Raid1:
		return 2
	case RaidZ1:
		return 3
	case Raid10, RaidZ2:
		return 4
	case RaidZ3:
		return 5
	}
	return 1
}

// checkFilesystemOptions: only the options table of the chosen filesystem,
// its RAID level, and enough disks for it.
func checkFilesystemOptions(c *checker, d *DiskSetup) {
	var want string
	switch d.Filesystem {
	case FilesystemExt4, FilesystemXFS:
		want = "lvm"
	case FilesystemZFS:
		want = "zfs"
	case FilesystemBtrfs:
		want = "btrfs"
	}
	for _, o := range []struct {
		name string
		set  bool
	}{{"zfs", d.ZFS != nil}, {"lvm", d.LVM != nil}, {"btrfs", d.Btrfs != nil}} {
		if o.set && want != "" && o.name != want {
			c.bad("disk-setup."+o.name, "make sure only '%s' options are set for filesystem %s", want, d.Filesystem)
		}
	}

	switch d.Filesystem {
	case FilesystemExt4, FilesystemXFS:
		if len(d.DiskList) > 1 {
			c.bad("disk-setup.disk-list", "filesystem %s takes one disk, got %d", d.Filesystem, len(d.DiskList))
		}
	case FilesystemZFS:
		if d.ZFS == nil || d.ZFS.Raid == "" {
			c.bad("disk-setup.zfs.raid", "required for filesystem zfs: raid0, raid1, raid10, raidz-1, raidz-2 or raidz-3")
		} else if c.raid("disk-setup.zfs.raid", d.ZFS.Raid, Raid0, Raid1, Raid10, RaidZ1, RaidZ2, RaidZ3) {
			c.diskCount("ZFS", d.ZFS.Raid, d.DiskList)
		}
	case FilesystemBtrfs:
		if d.Btrfs == nil || d.Btrfs.Raid == "" {
			c.bad("disk-setup.btrfs.raid", "required for filesystem btrfs: raid0, raid1 or raid10")
		} else if c.raid("disk-setup.btrfs.raid", d.Btrfs.Raid, Raid0, Raid1, Raid10) {
			c.diskCount("Btrfs", d.Btrfs.Raid, d.DiskList)
		}
	}
}

// raid checks a RAID level against the valid ones, insisting on lower case.
func (c *checker) raid(path string, r RaidLevel, valid ...RaidLevel) bool {
	s := string(r)
	if !c.text(path, s) {
		return false
	}
	if slices.Contains(valid, r) {
		return true
	}
	var names []string
	for _, v := range valid {
		names = append(names, string(v))
	}
	if slices.Contains(valid, RaidLevel(strings.ToLower(s))) {
		c.bad(path, "%q: write it in lower case, %q (older installers accept nothing else)", s, strings.ToLower(s))
	} else {
		c.bad(path, "%q: want one of %s", s, strings.Join(names, ", "))
	}
	return false
}

// diskCount checks the listed disks against the RAID level's minimum.
// With a filter the installer counts the disks on the machine.
func (c *checker) diskCount(fs string, r RaidLevel, disks []string) {
	if len(disks) == 0 {
		return
	}
	if n := MinDisks(r); len(disks) < n {
		c.bad("disk-setup.disk-list", "%s %s needs at least %d disks, got %d", fs, strings.ToUpper(string(r)), n, len(disks))
	} else if r == Raid10 && len(disks)%2 != 0 {
		c.bad("disk-setup.disk-list", "%s RAID10 needs an even number of disks, got %d", fs, len(disks))
	}
}

// checkSwapSize: at most half the disk for swap (the installer's message).
func checkSwapSize(c *checker, l *LVMOptions) {
	if l.HDSize != nil && l.SwapSize != nil && *l.SwapSize > *l.HDSize/2 {
		c.bad("disk-setup.lvm.swapsize", "Swap size %g GiB cannot be greater than %g GiB (hard disk size / 2)", *l.SwapSize, *l.HDSize/2)
	}
}

// checkFirstBootSource: first-boot.source decides whether url and
// cert-fingerprint are needed and allowed.
func checkFirstBootSource(c *checker, f *FirstBoot) {
	switch f.Source {
	case "":
		c.bad("first-boot.source", "required: %q or %q", FirstBootFromISO, FirstBootFromURL)
	case FirstBootFromURL:
		if f.URL == "" {
			c.bad("first-boot.url", "first-boot executable source set to URL, but none specified!")
		}
		c.url("first-boot.url", f.URL, false)
		c.fingerprint("first-boot.cert-fingerprint", f.CertFingerprint)
	case FirstBootFromISO:
		if f.URL != "" {
			c.bad("first-boot.url", "only with source %q", FirstBootFromURL)
		}
		if f.CertFingerprint != "" {
			c.bad("first-boot.cert-fingerprint", "only with source %q", FirstBootFromURL)
		}
	default:
		c.oneOf("first-boot.source", string(f.Source), string(FirstBootFromISO), string(FirstBootFromURL))
	}
}
