package answer

import "math"

// The schema of the answer file: one table per TOML table, one row per key
// in the order Render writes them. Columns: key (canonical kebab-case
// name), first (first installer release knowing it), last (the last one,
// when a release drops it), alias (the other spelling; see Key.Alias),
// val (its TOML type, the model field it fills, and the checks of its
// value), dflt (the installer's value when it is absent) and rule (checks
// across keys, reported at this key).
//
// Sources: the installer's own answer types (pve-installer's answer.rs
// and, from 9.2, proxmox-installer-types), as the key history in the
// package documentation sums them up.

// answerTable is the whole file: its sections.
var answerTable = &table[Answer]{kebab: kebabSince, rows: []row[Answer]{
	{key: "global", first: Version82, val: section(func(a *Answer) *Global { return &a.Global }, globalTable)},
	{key: "network", first: Version82, val: section(func(a *Answer) *Network { return &a.Network }, networkTable)},
	{key: "disk-setup", first: Version82, val: section(func(a *Answer) *DiskSetup { return &a.DiskSetup }, diskSetupTable)},
	{key: "post-installation-webhook", first: Version83,
		val: options(func(a *Answer) **Webhook { return &a.PostInstallationWebhook }, webhookTable)},
	{key: "first-boot", first: Version83, val: options(func(a *Answer) **FirstBoot { return &a.FirstBoot }, firstBootTable)},
}}

// globalTable is [global].
var globalTable = &table[Global]{adaptRule: adaptPasswords, rows: []row[Global]{
	{key: "keyboard", first: Version82, val: text(func(g *Global) *string { return &g.Keyboard }, required, oneOf(Keyboards()...))},
	{key: "country", first: Version82, val: text(func(g *Global) *string { return &g.Country },
		required, pattern(countryRe, `a lower-case two-letter country code such as "at" or "us"`), inList(countryList, "country code"))},
	{key: "fqdn", first: Version82, val: fqdnValue{fqdnTable}},
	{key: "mailto", first: Version82, val: text(func(g *Global) *string { return &g.Mailto },
		required, pattern(mailtoRe, `an e-mail address such as "root@example.com"`))},
	{key: "timezone", first: Version82, val: text(func(g *Global) *string { return &g.Timezone },
		required, pattern(timezoneRe, `a time zone name such as "Europe/Vienna" or "UTC"`), inList(timezoneList, "time zone"))},
	{key: "root-password", first: Version82, alias: "root_password", rule: checkPasswords,
		val: text(func(g *Global) *string { return &g.RootPassword }, present, passwordLength)},
	{key: "root-password-hashed", first: Version83, alias: "root_password_hashed",
		val: text(func(g *Global) *string { return &g.RootPasswordHashed }, present, cryptHash)},
	{key: "reboot-on-error", first: Version82, alias: "reboot_on_error", val: boolean(func(g *Global) **bool { return &g.RebootOnError })},
	{key: "reboot-mode", first: Version84, alias: "reboot_mode", dflt: string(RebootModeReboot),
		val: text(func(g *Global) *RebootMode { return &g.RebootMode }, oneOf(RebootModeReboot, RebootModePowerOff))},
	{key: "root-ssh-keys", first: Version82, alias: "root_ssh_keys", val: list(func(g *Global) *[]string { return &g.RootSSHKeys }, sshKeys)},
	{key: "subscription-key", first: Version92, alias: "subscription_key",
		val: text(func(g *Global) *string { return &g.SubscriptionKey }, present, subscriptionKey)},
}}

// fqdnTable is the table form of global.fqdn (8.4+). source defaults to
// from-dhcp, so a table with only domain is valid.
var fqdnTable = &table[FQDN]{rows: []row[FQDN]{
	{key: "source", first: Version84, val: tag[FQDN]{want: "from-dhcp", at: func(f *FQDN) *bool { return &f.FromDHCP }}},
	{key: "domain", first: Version84, val: text(func(f *FQDN) *string { return &f.Domain })},
}}

// networkTable is [network].
var networkTable = &table[Network]{rows: []row[Network]{
	{key: "source", first: Version82, rule: checkNetworkSource,
		val: text(func(n *Network) *NetworkSource { return &n.Source }).impliedUntil(Version91, string(NetworkFromDHCP))},
	{key: "cidr", first: Version82, val: text(func(n *Network) *string { return &n.CIDR })},
	{key: "dns", first: Version82, val: text(func(n *Network) *string { return &n.DNS })},
	{key: "gateway", first: Version82, val: text(func(n *Network) *string { return &n.Gateway })},
	{key: "filter", first: Version82, val: dict(func(n *Network) *map[string]string { return &n.Filter }, udevFilter)},
	{key: "interface-name-pinning", first: Version91,
		val: options(func(n *Network) **InterfaceNamePinning { return &n.InterfaceNamePinning }, pinningTable).orNone()},
}}

// pinningTable is network.interface-name-pinning (9.1+). enabled has no
// default in the installer: a table without it is refused.
var pinningTable = &table[InterfaceNamePinning]{rows: []row[InterfaceNamePinning]{
	{key: "enabled", first: Version91, dflt: false, rule: checkPinningEnabled,
		val: boolean(func(p *InterfaceNamePinning) **bool { return &p.Enabled }).required()},
	{key: "mapping", first: Version91, val: macDict(func(p *InterfaceNamePinning) *map[string]string { return &p.Mapping }, pinnedNames)},
}}

// diskSetupTable is [disk-setup].
var diskSetupTable = &table[DiskSetup]{rows: []row[DiskSetup]{
	{key: "filesystem", first: Version82, val: text(func(d *DiskSetup) *Filesystem { return &d.Filesystem },
		requiredAs("ext4, xfs, zfs or btrfs"), oneOf(FilesystemExt4, FilesystemXFS, FilesystemZFS, FilesystemBtrfs))},
	{key: "disk-list", first: Version82, alias: "disk_list", rule: checkDiskSelection,
		val: list(func(d *DiskSetup) *[]string { return &d.DiskList }, diskNames)},
	{key: "filter", first: Version82, val: dict(func(d *DiskSetup) *map[string]string { return &d.Filter }, udevFilter)},
	{key: "filter-match", first: Version82, alias: "filter_match",
		val: text(func(d *DiskSetup) *FilterMatch { return &d.FilterMatch }, oneOf(FilterMatchAny, FilterMatchAll))},
	{key: "zfs", first: Version82, rule: checkFilesystemOptions, val: options(func(d *DiskSetup) **ZFSOptions { return &d.ZFS }, zfsTable)},
	{key: "lvm", first: Version82, val: options(func(d *DiskSetup) **LVMOptions { return &d.LVM }, lvmTable).orNone()},
	{key: "btrfs", first: Version82, val: options(func(d *DiskSetup) **BtrfsOptions { return &d.Btrfs }, btrfsTable)},
}}

// zfsTable is disk-setup.zfs. The RAID level is checked with the
// filesystem (checkFilesystemOptions); from 8.3.3 it is read in upper case
// too ("RAIDZ-1").
var zfsTable = &table[ZFSOptions]{rows: []row[ZFSOptions]{
	{key: "raid", first: Version82, val: upperSince(text(func(z *ZFSOptions) *RaidLevel { return &z.Raid }),
		Version833, Raid0, Raid1, Raid10, RaidZ1, RaidZ2, RaidZ3)},
	{key: "ashift", first: Version82, val: integer(func(z *ZFSOptions) **int { return &z.Ashift }, intRange(9, 16))},
	{key: "arc-max", first: Version82, alias: "arc_max", val: integer(func(z *ZFSOptions) **int { return &z.ArcMax }, intRange(64, math.MaxInt32))},
	{key: "checksum", first: Version82, val: text(func(z *ZFSOptions) *string { return &z.Checksum }, oneOf("on", "fletcher4", "sha256"))},
	{key: "compress", first: Version82, val: text(func(z *ZFSOptions) *string { return &z.Compress },
		oneOf("on", "off", "lzjb", "lz4", "zle", "gzip", "zstd"))},
	{key: "copies", first: Version82, val: integer(func(z *ZFSOptions) **int { return &z.Copies }, intRange(1, 3))},
	{key: "hdsize", first: Version82, val: number(func(z *ZFSOptions) **float64 { return &z.HDSize }, size(true))},
}}

// lvmTable is disk-setup.lvm, for ext4 and xfs.
var lvmTable = &table[LVMOptions]{rule: checkSwapSize, rows: []row[LVMOptions]{
	{key: "hdsize", first: Version82, val: number(func(l *LVMOptions) **float64 { return &l.HDSize }, size(true))},
	{key: "swapsize", first: Version82, val: number(func(l *LVMOptions) **float64 { return &l.SwapSize }, size(false))},
	{key: "maxroot", first: Version82, val: number(func(l *LVMOptions) **float64 { return &l.MaxRoot }, size(false))},
	{key: "maxvz", first: Version82, val: number(func(l *LVMOptions) **float64 { return &l.MaxVZ }, size(false))},
	{key: "minfree", first: Version82, val: number(func(l *LVMOptions) **float64 { return &l.MinFree }, size(false))},
}}

// btrfsTable is disk-setup.btrfs. The RAID level is checked with the
// filesystem (checkFilesystemOptions); from 8.3.3 it is read in upper case
// too ("RAID1").
var btrfsTable = &table[BtrfsOptions]{rows: []row[BtrfsOptions]{
	{key: "raid", first: Version82, val: upperSince(text(func(b *BtrfsOptions) *RaidLevel { return &b.Raid }),
		Version833, Raid0, Raid1, Raid10)},
	{key: "hdsize", first: Version82, val: number(func(b *BtrfsOptions) **float64 { return &b.HDSize }, size(true))},
	{key: "compress", first: Version83, dflt: "off", val: text(func(b *BtrfsOptions) *string { return &b.Compress },
		oneOf("on", "off", "zlib", "lzo", "zstd"))},
}}

// webhookTable is [post-installation-webhook] (8.3+).
var webhookTable = &table[Webhook]{rows: []row[Webhook]{
	{key: "url", first: Version83, val: text(func(w *Webhook) *string { return &w.URL }, httpURL(true))},
	{key: "cert-fingerprint", first: Version83, alias: "cert_fingerprint",
		val: text(func(w *Webhook) *string { return &w.CertFingerprint }, fingerprint)},
	{key: "auth-token", first: Version92, alias: "auth_token", val: text(func(w *Webhook) *string { return &w.AuthToken }, textOnly)},
}}

// firstBootTable is [first-boot] (8.3+), kebab-case from its start.
var firstBootTable = &table[FirstBoot]{kebab: Version83, rows: []row[FirstBoot]{
	{key: "source", first: Version83, rule: checkFirstBootSource, val: text(func(f *FirstBoot) *FirstBootSource { return &f.Source })},
	{key: "ordering", first: Version83, val: text(func(f *FirstBoot) *FirstBootOrdering { return &f.Ordering },
		oneOf(OrderingBeforeNetwork, OrderingNetworkOnline, OrderingFullyUp))},
	{key: "url", first: Version83, val: text(func(f *FirstBoot) *string { return &f.URL })},
	{key: "cert-fingerprint", first: Version83, alias: "cert_fingerprint", val: text(func(f *FirstBoot) *string { return &f.CertFingerprint })},
}}

// keyRules is the compiled schema, each table before its keys; see
// compileSchema.
var keyRules []keyRule

// hashedPassword is the rule of global.root-password-hashed, for
// adaptPasswords.
var hashedPassword keyRule

func init() { compileSchema() }

// compileSchema sets the paths and rules of every table from its rows. A
// rule looked up by path here that the tables lack stops the package at
// start-up, so every test fails.
func compileSchema() {
	keyRules = answerTable.compile("", 0)
	hashedPassword = mustRule("global.root-password-hashed")
}

// mustRule returns the rule at path, panicking (at start-up) when the
// schema has none.
func mustRule(path string) keyRule {
	for _, r := range keyRules {
		if r.path == path {
			return r
		}
	}
	panic("answer: the schema has no key " + path)
}
