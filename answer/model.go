package answer

// Answer is the content of an answer.toml for the Proxmox VE automated
// installer, independent of how a given installer version spells its keys.
// [Render] writes it for one version; [Decode] reads it back.
//
// Every field maps to one key of the answer file; the key is named in the
// field's doc with its canonical (8.4+) spelling and the first release that
// knows it. The schema ([Schema]) binds each key to its field, and a test
// holds the two, and these docs, in step. A zero value (empty string, nil pointer, slice or map) means
// "leave the key out"; pointers are used where the zero of the type is a
// meaningful value (reboot-on-error = false, lvm.maxvz = 0).
//
// An Answer holds secrets (root password, webhook token): do not log it.
type Answer struct {
	// Global is the [global] section (required).
	Global Global
	// Network is the [network] section (required).
	Network Network
	// DiskSetup is the [disk-setup] section (required).
	DiskSetup DiskSetup
	// PostInstallationWebhook is the optional [post-installation-webhook]
	// section (8.3+); nil leaves it out.
	PostInstallationWebhook *Webhook
	// FirstBoot is the optional [first-boot] section (8.3+); nil leaves it
	// out.
	FirstBoot *FirstBoot
}

// Global is the [global] section.
type Global struct {
	// Keyboard is global.keyboard, a layout such as "en-us" or "de-ch"
	// (required; see [Keyboards]).
	Keyboard string
	// Country is global.country, a lower-case two-letter code such as "at"
	// (required).
	Country string
	// FQDN is global.fqdn (required): a fixed name, or from DHCP (8.4+).
	FQDN FQDN
	// Mailto is global.mailto, the administrator's e-mail address
	// (required).
	Mailto string
	// Timezone is global.timezone, a zone name such as "Europe/Vienna" or
	// "UTC" (required).
	Timezone string
	// RootPassword is global.root-password (root_password before 8.4), the
	// plain-text root password; at least 8 characters from 8.4.
	//
	// One of RootPassword and RootPasswordHashed is required. The installer
	// refuses both at once, but an Answer may carry both: [Render] then
	// writes the hashed one where the installer knows it (8.3+) and the
	// plain one only for 8.2. This lets one Answer serve every version.
	RootPassword string
	// RootPasswordHashed is global.root-password-hashed
	// (root_password_hashed before 8.4, 8.3+), a crypt(3) hash such as one
	// from [HashPassword]. See RootPassword.
	RootPasswordHashed string
	// RebootOnError is global.reboot-on-error (reboot_on_error before 8.4):
	// reboot instead of dropping to a shell when the installation fails.
	// nil leaves it out (installer default false).
	RebootOnError *bool
	// RebootMode is global.reboot-mode (8.4+): what to do after a
	// successful installation. Empty leaves it out (installer default
	// [RebootModeReboot]).
	RebootMode RebootMode
	// RootSSHKeys is global.root-ssh-keys (root_ssh_keys before 8.4), public
	// keys for root's authorized_keys, one "type base64 comment" string each.
	RootSSHKeys []string
	// SubscriptionKey is global.subscription-key (9.2+), staged for
	// activation on first boot, e.g. "pve4c-0123456789".
	SubscriptionKey string
}

// FQDN is global.fqdn: either a fixed name (Name) or, from 8.4, the name
// the DHCP server gives (FromDHCP) with an optional fallback Domain.
type FQDN struct {
	// Name is the fixed fully qualified domain name, "pve1.example.com";
	// a bare host name is rejected. Set either Name or FromDHCP.
	Name string
	// FromDHCP renders fqdn.source = "from-dhcp" (8.4+).
	FromDHCP bool
	// Domain is fqdn.domain; only with FromDHCP. When set it is the
	// node's domain even when the DHCP lease names another: the installer
	// takes it first and the lease's domain only in its absence. A table
	// with only domain is from DHCP (the installer's default source).
	Domain string
}

// Network is the [network] section.
type Network struct {
	// Source is network.source (required): [NetworkFromDHCP] or
	// [NetworkFromAnswer]. The installer before 9.2 defaults it to from-dhcp;
	// 9.2 requires it, so it is always written.
	Source NetworkSource
	// CIDR is network.cidr, the management address with its prefix length,
	// "10.10.10.10/24" (from-answer only, required there).
	CIDR string
	// DNS is network.dns, one DNS server address (from-answer only,
	// required there).
	DNS string
	// Gateway is network.gateway, the default gateway address (from-answer
	// only, required there).
	Gateway string
	// Filter is network.filter: udev property name to glob, selecting the
	// management NIC ("ID_NET_NAME_MAC" = "*a0369f0ab382"). The first NIC on
	// which any entry matches is taken. From-answer only, required there.
	Filter map[string]string
	// InterfaceNamePinning is network.interface-name-pinning (9.1+); nil
	// leaves it out.
	InterfaceNamePinning *InterfaceNamePinning
}

// InterfaceNamePinning is network.interface-name-pinning (9.1+): fixed NIC
// names written as systemd .link files.
type InterfaceNamePinning struct {
	// Enabled is interface-name-pinning.enabled. The installer has no
	// default for it: a table with a mapping needs it (nil is refused), and
	// Render writes it whenever it writes the table.
	Enabled *bool
	// Mapping is interface-name-pinning.mapping: MAC address to interface
	// name (at most 15 characters, "lan0"). MACs are written in lower case.
	// NICs not in the map are named with the prefix "nic".
	Mapping map[string]string
}

// DiskSetup is the [disk-setup] section. Set exactly one of DiskList and
// Filter, and only the options (ZFS, LVM or Btrfs) of the chosen
// Filesystem.
type DiskSetup struct {
	// Filesystem is disk-setup.filesystem (required).
	Filesystem Filesystem
	// DiskList is disk-setup.disk-list (disk_list before 8.4): kernel device
	// names such as "sda" or "nvme0n1". ext4 and xfs take exactly one disk.
	DiskList []string
	// Filter is disk-setup.filter: udev property name to glob
	// ("ID_SERIAL" = "*MZ7KM240HAGR*"), resolved by the installer on the
	// machine, since the answer server cannot see the disks.
	Filter map[string]string
	// FilterMatch is disk-setup.filter-match (filter_match before 8.4):
	// whether a disk must match any (default) or all filter entries. ext4
	// and xfs ignore it and take the first disk matching any entry.
	FilterMatch FilterMatch
	// ZFS is disk-setup.zfs, required for filesystem zfs.
	ZFS *ZFSOptions
	// LVM is disk-setup.lvm, optional for ext4 and xfs.
	LVM *LVMOptions
	// Btrfs is disk-setup.btrfs, required for filesystem btrfs.
	Btrfs *BtrfsOptions
}

// ZFSOptions is disk-setup.zfs.
type ZFSOptions struct {
	// Raid is zfs.raid (required), in lower case.
	Raid RaidLevel
	// Ashift is zfs.ashift, 9 to 16 (installer default 12).
	Ashift *int
	// ArcMax is zfs.arc-max (zfs.arc_max before 8.4), the ARC size limit in
	// MiB, at least 64 (the installer computes a default).
	ArcMax *int
	// Checksum is zfs.checksum: "on", "fletcher4" or "sha256".
	Checksum string
	// Compress is zfs.compress: "on", "off", "lzjb", "lz4", "zle", "gzip"
	// or "zstd".
	Compress string
	// Copies is zfs.copies, 1 to 3 (installer default 1).
	Copies *int
	// HDSize is zfs.hdsize, the GiB used on each disk.
	HDSize *float64
}

// LVMOptions is disk-setup.lvm, for ext4 and xfs. Sizes are in GiB.
type LVMOptions struct {
	// HDSize is lvm.hdsize, the GiB of the disk to use.
	HDSize *float64
	// SwapSize is lvm.swapsize, at most half of HDSize.
	SwapSize *float64
	// MaxRoot is lvm.maxroot, the largest root volume.
	MaxRoot *float64
	// MaxVZ is lvm.maxvz, the largest data volume; 0 creates none.
	MaxVZ *float64
	// MinFree is lvm.minfree, space left free in the volume group.
	MinFree *float64
}

// BtrfsOptions is disk-setup.btrfs.
type BtrfsOptions struct {
	// Raid is btrfs.raid (required): [Raid0], [Raid1] or [Raid10].
	Raid RaidLevel
	// HDSize is btrfs.hdsize, the GiB used on each disk.
	HDSize *float64
	// Compress is btrfs.compress (8.3+): "on", "off" (installer default),
	// "zlib", "lzo" or "zstd".
	Compress string
}

// Webhook is the [post-installation-webhook] section (8.3+): after a
// successful installation the installer POSTs a JSON report to URL.
type Webhook struct {
	// URL is post-installation-webhook.url (required), http or https.
	URL string
	// CertFingerprint is post-installation-webhook.cert-fingerprint
	// (cert_fingerprint before 8.4): the SHA-256 fingerprint of the server's
	// certificate, hex with optional colons, pinning it instead of WebPKI.
	CertFingerprint string
	// AuthToken is post-installation-webhook.auth-token (9.2+), sent back as
	// "token" in the report. It is a secret.
	AuthToken string
}

// FirstBoot is the [first-boot] section (8.3+): an executable run once on
// the installed system's first boot. Its keys are kebab-case in every
// version.
type FirstBoot struct {
	// Source is first-boot.source (required).
	Source FirstBootSource
	// Ordering is first-boot.ordering: when the executable runs. Empty
	// leaves it out (installer default [OrderingFullyUp]).
	Ordering FirstBootOrdering
	// URL is first-boot.url, where the live installer downloads the
	// executable before installing; required with [FirstBootFromURL] and
	// only allowed there.
	URL string
	// CertFingerprint is first-boot.cert-fingerprint, pinning the URL's
	// certificate like [Webhook.CertFingerprint]; only with a URL.
	CertFingerprint string
}

// NetworkSource is the value of network.source.
type NetworkSource string

// Network sources.
const (
	// NetworkFromDHCP keeps the address the installer got by DHCP.
	NetworkFromDHCP NetworkSource = "from-dhcp"
	// NetworkFromAnswer uses network.cidr, dns, gateway and filter.
	NetworkFromAnswer NetworkSource = "from-answer"
)

// Filesystem is the value of disk-setup.filesystem.
type Filesystem string

// Filesystems for the root disk(s).
const (
	// FilesystemExt4 is ext4 on LVM, one disk.
	FilesystemExt4 Filesystem = "ext4"
	// FilesystemXFS is xfs on LVM, one disk.
	FilesystemXFS Filesystem = "xfs"
	// FilesystemZFS is a ZFS pool; disk-setup.zfs.raid is required.
	FilesystemZFS Filesystem = "zfs"
	// FilesystemBtrfs is btrfs; disk-setup.btrfs.raid is required.
	FilesystemBtrfs Filesystem = "btrfs"
)

// RaidLevel is the value of zfs.raid or btrfs.raid, in lower case: 8.2 and
// 8.3.0 to 8.3.2 read nothing else; [Decode] reads the upper-case
// spellings of 8.3.3 and later ("RAIDZ-1") into these.
type RaidLevel string

// RAID levels. The raidz levels exist for ZFS only.
const (
	// Raid0 stripes over all disks (at least 1).
	Raid0 RaidLevel = "raid0"
	// Raid1 mirrors over all disks (at least 2).
	Raid1 RaidLevel = "raid1"
	// Raid10 stripes over mirrored pairs (at least 4, an even number).
	Raid10 RaidLevel = "raid10"
	// RaidZ1 is ZFS single parity (at least 3 disks).
	RaidZ1 RaidLevel = "raidz-1"
	// RaidZ2 is ZFS double parity (at least 4 disks).
	RaidZ2 RaidLevel = "raidz-2"
	// RaidZ3 is ZFS triple parity (at least 5 disks).
	RaidZ3 RaidLevel = "raidz-3"
)

// FilterMatch is the value of disk-setup.filter-match.
type FilterMatch string

// Filter match modes.
const (
	// FilterMatchAny selects disks matching any filter entry (the default).
	FilterMatchAny FilterMatch = "any"
	// FilterMatchAll selects disks matching every filter entry. A disk that
	// lacks a filtered udev key altogether is selected too (installer quirk),
	// so filter on keys every disk has.
	FilterMatchAll FilterMatch = "all"
)

// RebootMode is the value of global.reboot-mode (8.4+).
type RebootMode string

// Reboot modes.
const (
	// RebootModeReboot reboots after the installation (the default).
	RebootModeReboot RebootMode = "reboot"
	// RebootModePowerOff powers the machine off after the installation.
	RebootModePowerOff RebootMode = "power-off"
)

// FirstBootSource is the value of first-boot.source.
type FirstBootSource string

// First-boot executable sources.
const (
	// FirstBootFromISO runs the file the ISO was prepared with
	// (prepare-iso --on-first-boot).
	FirstBootFromISO FirstBootSource = "from-iso"
	// FirstBootFromURL downloads the file from first-boot.url (at most
	// 1 MiB; a larger file is silently cut).
	FirstBootFromURL FirstBootSource = "from-url"
)

// FirstBootOrdering is the value of first-boot.ordering.
type FirstBootOrdering string

// First-boot orderings: the executable gets the ordering as its argument.
const (
	// OrderingBeforeNetwork runs before the network is configured.
	OrderingBeforeNetwork FirstBootOrdering = "before-network"
	// OrderingNetworkOnline runs once the network is online.
	OrderingNetworkOnline FirstBootOrdering = "network-online"
	// OrderingFullyUp runs after the Proxmox services are up (the default).
	OrderingFullyUp FirstBootOrdering = "fully-up"
)

// Keyboards returns the keyboard layouts global.keyboard accepts.
func Keyboards() []string {
	return []string{
		"de", "de-ch", "dk", "en-gb", "en-us", "es", "fi", "fr", "fr-be", "fr-ca", "fr-ch",
		"hu", "is", "it", "jp", "lt", "mk", "nl", "no", "pl", "pt", "pt-br", "se", "si", "tr",
	}
}

// Ptr returns a pointer to v, for the optional fields of an [Answer]:
// RebootOnError: answer.Ptr(true).
func Ptr[T any](v T) *T { return &v }
