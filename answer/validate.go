package answer

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
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
	// Version is the installer release the answer is for.
	Version Version
}

// Error says which key needs which release.
func (e *UnsupportedError) Error() string {
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
// RAID levels; an even disk count for RAID10 (9.2.6 rejects odd ones);
// from-dhcp takes no cidr, dns, gateway or filter; first-boot.url only with
// from-url; disk names without "/".
func Validate(a *Answer, v Version) error {
	_, err := prepare(a, v, RenderOptions{})
	return err
}

// prepare adapts a to v (see adapt) and checks the result.
func prepare(a *Answer, v Version, opts RenderOptions) (*Answer, error) {
	if a == nil {
		return nil, fmt.Errorf("%w: the answer is nil", ErrInvalid)
	}
	if err := checkVersion(v); err != nil {
		return nil, err
	}
	b, err := adapt(a, v, opts)
	if err != nil {
		return nil, err
	}
	var c checker
	c.v = v
	c.answer(b)
	return b, errors.Join(c.errs...)
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

// adapt returns a copy of a holding only what installer v knows, by these
// rules:
//
//   - both root passwords set: the hashed one from 8.3, the plain one for
//     8.2. Only a hashed one for 8.2 is an error.
//   - fqdn from DHCP before 8.4 is an error: global.fqdn is required.
//   - a newer key holding the installer's default is left out.
//   - any other newer key is an error, or left out (and logged) with
//     opts.DropUnsupported.
//
// adapt never changes a.
func adapt(a *Answer, v Version, opts RenderOptions) (*Answer, error) {
	b := *a
	var errs []error
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	unsupported := func(path string) {
		errs = append(errs, &UnsupportedError{Key: path, Since: rule(path).since, Version: v})
	}
	// drop reports whether the newer key at path is to be left out, and
	// records an error when it is not.
	drop := func(path string) bool {
		if !opts.DropUnsupported {
			unsupported(path)
			return false
		}
		log.Warn("answer key left out: installer too old", "key", path, "since", rule(path).since.String(), "version", v.String())
		return true
	}

	g := &b.Global
	if g.RootPasswordHashed != "" && v < rule("global.root-password-hashed").since {
		if g.RootPassword == "" {
			unsupported("global.root-password-hashed")
		}
		g.RootPasswordHashed = ""
	}
	if g.RootPassword != "" && g.RootPasswordHashed != "" {
		g.RootPassword = ""
	}
	if g.FQDN.FromDHCP && v < rule("global.fqdn.source").since {
		unsupported("global.fqdn.source")
	}
	if g.RebootMode != "" && v < rule("global.reboot-mode").since {
		if g.RebootMode == RebootModeReboot || drop("global.reboot-mode") {
			g.RebootMode = ""
		}
	}
	if g.SubscriptionKey != "" && v < rule("global.subscription-key").since && drop("global.subscription-key") {
		g.SubscriptionKey = ""
	}
	if p := b.Network.InterfaceNamePinning; p != nil && v < rule("network.interface-name-pinning").since {
		if ((p.Enabled == nil || !*p.Enabled) && len(p.Mapping) == 0) || drop("network.interface-name-pinning") {
			b.Network.InterfaceNamePinning = nil
		}
	}
	if bt := b.DiskSetup.Btrfs; bt != nil && bt.Compress != "" && v < rule("disk-setup.btrfs.compress").since {
		if bt.Compress == "off" || drop("disk-setup.btrfs.compress") {
			c := *bt
			c.Compress = ""
			b.DiskSetup.Btrfs = &c
		}
	}
	if w := b.PostInstallationWebhook; w != nil {
		switch {
		case v < rule("post-installation-webhook").since:
			if drop("post-installation-webhook") {
				b.PostInstallationWebhook = nil
			}
		case w.AuthToken != "" && v < rule("post-installation-webhook.auth-token").since:
			if drop("post-installation-webhook.auth-token") {
				c := *w
				c.AuthToken = ""
				b.PostInstallationWebhook = &c
			}
		}
	}
	if b.FirstBoot != nil && v < rule("first-boot").since && drop("first-boot") {
		b.FirstBoot = nil
	}
	return &b, errors.Join(errs...)
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

// oneOf checks that s is one of the valid values.
func (c *checker) oneOf(path, s string, valid ...string) {
	if s != "" && c.text(path, s) && !slices.Contains(valid, s) {
		c.bad(path, "%q: want one of %s", s, strings.Join(valid, ", "))
	}
}

func (c *checker) answer(a *Answer) {
	c.global(&a.Global)
	c.network(&a.Network)
	c.diskSetup(&a.DiskSetup)
	if w := a.PostInstallationWebhook; w != nil {
		c.url("post-installation-webhook.url", w.URL, true)
		c.fingerprint("post-installation-webhook.cert-fingerprint", w.CertFingerprint)
		c.text("post-installation-webhook.auth-token", w.AuthToken)
	}
	if f := a.FirstBoot; f != nil {
		c.firstBoot(f)
	}
}

func (c *checker) global(g *Global) {
	if c.required("global.keyboard", g.Keyboard) {
		c.oneOf("global.keyboard", g.Keyboard, Keyboards()...)
	}
	if c.required("global.country", g.Country) && !countryRe.MatchString(g.Country) {
		c.bad("global.country", "%q: want a lower-case two-letter country code such as \"at\" or \"us\"", g.Country)
	}
	c.fqdn(&g.FQDN)
	if c.required("global.mailto", g.Mailto) && !mailtoRe.MatchString(g.Mailto) {
		c.bad("global.mailto", "%q: want an e-mail address such as \"root@example.com\"", g.Mailto)
	}
	if c.required("global.timezone", g.Timezone) && !timezoneRe.MatchString(g.Timezone) {
		c.bad("global.timezone", "%q: want a time zone name such as \"Europe/Vienna\" or \"UTC\"", g.Timezone)
	}

	switch {
	case g.RootPassword != "" && g.RootPasswordHashed != "":
		c.bad("global", "`global.root-password` and `global.root-password-hashed` cannot be set at the same time")
	case g.RootPassword == "" && g.RootPasswordHashed == "":
		c.bad("global", "One of `global.root-password` or `global.root-password-hashed` must be set")
	}
	if g.RootPassword != "" && c.text("global.root-password", g.RootPassword) &&
		c.v.AtLeast(Version84) && utf8.RuneCountInString(g.RootPassword) < 8 {
		c.bad("global.root-password", "`global.root-password` must be at least 8 characters long")
	}
	if h := g.RootPasswordHashed; h != "" && c.text("global.root-password-hashed", h) {
		ok := len(h) > 3 && h[0] == '$' && strings.IndexByte(h[1:], '$') > 0 &&
			!strings.ContainsFunc(h, func(r rune) bool { return r <= ' ' || r > '~' || r == ':' })
		if !ok {
			c.bad("global.root-password-hashed", "not a crypt(3) hash: want \"$id$salt$hash\" (see HashPassword) without spaces or colons")
		}
	}
	c.oneOf("global.reboot-mode", string(g.RebootMode), string(RebootModeReboot), string(RebootModePowerOff))
	for i, k := range g.RootSSHKeys {
		path := fmt.Sprintf("global.root-ssh-keys[%d]", i)
		if c.required(path, k) && len(strings.Fields(k)) < 2 {
			c.bad(path, "%q: want an OpenSSH public key line such as \"ssh-ed25519 AAAA... comment\"", k)
		}
	}
	if s := g.SubscriptionKey; s != "" && c.text("global.subscription-key", s) && !subscriptionRe.MatchString(s) {
		c.bad("global.subscription-key", "not a subscription key: want the form pve4c-0123456789 (pveN, pbs or pmg, a level letter c/b/s/p, and 10 hex digits)")
	}
}

func (c *checker) fqdn(f *FQDN) {
	switch {
	case f.FromDHCP && f.Name != "":
		c.bad("global.fqdn", "set either a name or from DHCP, not both")
	case f.FromDHCP:
		if f.Domain != "" && c.text("global.fqdn.domain", f.Domain) && !validDomain(f.Domain, 1) {
			c.bad("global.fqdn.domain", "%q: want a domain name such as \"example.com\"", f.Domain)
		}
	case f.Domain != "":
		c.bad("global.fqdn.domain", "only with the FQDN from DHCP")
	case f.Name == "":
		c.bad("global.fqdn", "required: a fully qualified domain name, or from DHCP")
	case c.text("global.fqdn", f.Name) && !validDomain(f.Name, 2):
		c.bad("global.fqdn", "%q: want a fully qualified domain name such as \"pve1.example.com\" (a bare host name is rejected)", f.Name)
	}
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

func (c *checker) network(n *Network) {
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
	c.filter("network.filter", n.Filter)

	if p := n.InterfaceNamePinning; p != nil {
		macs := map[string]bool{}
		names := map[string]string{}
		for _, mac := range slices.Sorted(maps.Keys(p.Mapping)) {
			name := p.Mapping[mac]
			path := fmt.Sprintf("network.interface-name-pinning.mapping.%q", mac)
			if !c.text(path, mac) {
				continue
			}
			m, ok := canonicalMAC(mac)
			switch {
			case !ok:
				c.bad(path, "%q: want a MAC address such as \"24:8a:07:1e:05:bc\"", mac)
			case macs[m]:
				c.bad(path, "MAC %s is mapped twice", m)
			}
			macs[m] = true
			if !c.required(path, name) {
				continue
			}
			lower := strings.ToLower(name)
			switch {
			case len(name) > 15:
				c.bad(path, "interface name '%s' for '%s' cannot be longer than 15 characters", name, m)
			case !ifaceNameRe.MatchString(name):
				c.bad(path, "interface name %q: want a letter, then letters, digits or _, optionally :N or .N, such as \"lan0\"", name)
			case names[lower] != "":
				c.bad(path, "interface name %q is also given to %s", name, names[lower])
			}
			names[lower] = m
		}
	}
}

// filter checks a udev filter table.
func (c *checker) filter(path string, f map[string]string) {
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

// minDisks is the installer's get_min_disks.
func minDisks(r RaidLevel) int {
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

func (c *checker) diskSetup(d *DiskSetup) {
	c.oneOf("disk-setup.filesystem", string(d.Filesystem), string(FilesystemExt4), string(FilesystemXFS), string(FilesystemZFS), string(FilesystemBtrfs))
	if d.Filesystem == "" {
		c.bad("disk-setup.filesystem", "required: ext4, xfs, zfs or btrfs")
	}
	switch {
	case len(d.DiskList) == 0 && len(d.Filter) == 0:
		c.bad("disk-setup", "Need either 'disk-list' or 'filter' set")
	case len(d.DiskList) > 0 && len(d.Filter) > 0:
		c.bad("disk-setup", "Cannot use both, 'disk-list' and 'filter'")
	}
	seen := map[string]bool{}
	for i, disk := range d.DiskList {
		path := fmt.Sprintf("disk-setup.disk-list[%d]", i)
		switch {
		case !c.required(path, disk):
		case strings.ContainsAny(disk, "/ "):
			c.bad(path, "%q: want a kernel device name such as \"sda\" or \"nvme0n1\"", disk)
		case seen[disk]:
			c.bad("disk-setup.disk-list", "List of disks contains duplicate device %s", disk)
		}
		seen[disk] = true
	}
	c.filter("disk-setup.filter", d.Filter)
	c.oneOf("disk-setup.filter-match", string(d.FilterMatch), string(FilterMatchAny), string(FilterMatchAll))

	// Only the options table of the chosen filesystem may be present.
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

	if z := d.ZFS; z != nil {
		c.intRange("disk-setup.zfs.ashift", z.Ashift, 9, 16)
		c.intRange("disk-setup.zfs.arc-max", z.ArcMax, 64, math.MaxInt32)
		c.intRange("disk-setup.zfs.copies", z.Copies, 1, 3)
		c.oneOf("disk-setup.zfs.checksum", z.Checksum, "on", "fletcher4", "sha256")
		c.oneOf("disk-setup.zfs.compress", z.Compress, "on", "off", "lzjb", "lz4", "zle", "gzip", "zstd")
		c.size("disk-setup.zfs.hdsize", z.HDSize, true)
	}
	if l := d.LVM; l != nil {
		c.size("disk-setup.lvm.hdsize", l.HDSize, true)
		c.size("disk-setup.lvm.swapsize", l.SwapSize, false)
		c.size("disk-setup.lvm.maxroot", l.MaxRoot, false)
		c.size("disk-setup.lvm.maxvz", l.MaxVZ, false)
		c.size("disk-setup.lvm.minfree", l.MinFree, false)
		if l.HDSize != nil && l.SwapSize != nil && *l.SwapSize > *l.HDSize/2 {
			c.bad("disk-setup.lvm.swapsize", "Swap size %g GiB cannot be greater than %g GiB (hard disk size / 2)", *l.SwapSize, *l.HDSize/2)
		}
	}
	if b := d.Btrfs; b != nil {
		c.size("disk-setup.btrfs.hdsize", b.HDSize, true)
		c.oneOf("disk-setup.btrfs.compress", b.Compress, "on", "off", "zlib", "lzo", "zstd")
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
	if n := minDisks(r); len(disks) < n {
		c.bad("disk-setup.disk-list", "%s %s needs at least %d disks, got %d", fs, strings.ToUpper(string(r)), n, len(disks))
	} else if r == Raid10 && len(disks)%2 != 0 {
		c.bad("disk-setup.disk-list", "%s RAID10 needs an even number of disks, got %d", fs, len(disks))
	}
}

func (c *checker) intRange(path string, p *int, lo, hi int) {
	if p != nil && (*p < lo || *p > hi) {
		if hi == math.MaxInt32 {
			c.bad(path, "%d: want at least %d", *p, lo)
			return
		}
		c.bad(path, "%d: want %d to %d", *p, lo, hi)
	}
}

// size checks a size in GiB: finite, not negative, and above zero if
// positive is set.
func (c *checker) size(path string, p *float64, positive bool) {
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

func (c *checker) firstBoot(f *FirstBoot) {
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
	c.oneOf("first-boot.ordering", string(f.Ordering), string(OrderingBeforeNetwork), string(OrderingNetworkOnline), string(OrderingFullyUp))
}
