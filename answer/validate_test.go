package answer_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
)

// validAnswer passes every rule of every version.
func validAnswer() *answer.Answer {
	return &answer.Answer{
		Global: answer.Global{
			Keyboard: "en-us", Country: "us", FQDN: answer.FQDN{Name: "pve1.example.com"},
			Mailto: "root@example.com", Timezone: "America/New_York", RootPassword: "Passw0rd-x",
		},
		Network:   answer.Network{Source: answer.NetworkFromDHCP},
		DiskSetup: answer.DiskSetup{Filesystem: answer.FilesystemExt4, DiskList: []string{"sda"}},
	}
}

func zfsOn(raid answer.RaidLevel, disks ...string) func(a *answer.Answer) {
	return func(a *answer.Answer) {
		a.DiskSetup = answer.DiskSetup{Filesystem: answer.FilesystemZFS, DiskList: disks, ZFS: &answer.ZFSOptions{Raid: raid}}
	}
}

func btrfsOn(raid answer.RaidLevel, disks ...string) func(a *answer.Answer) {
	return func(a *answer.Answer) {
		a.DiskSetup = answer.DiskSetup{Filesystem: answer.FilesystemBtrfs, DiskList: disks, Btrfs: &answer.BtrfsOptions{Raid: raid}}
	}
}

func disks(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("sd%c", 'a'+i))
	}
	return out
}

func TestValidateAcceptsGoodAnswers(t *testing.T) {
	tests := map[string]struct {
		change func(a *answer.Answer)
		v      answer.Version
	}{
		"the base answer for 8.2":                {func(*answer.Answer) {}, answer.Version82},
		"a 6-character password for 8.3":         {func(a *answer.Answer) { a.Global.RootPassword = "123456" }, answer.Version83},
		"an 8-character unicode password on 8.4": {func(a *answer.Answer) { a.Global.RootPassword = "ääääöööö" }, answer.Version84},
		"ZFS raid0 on one disk":                  {zfsOn(answer.Raid0, disks(1)...), answer.Version92},
		"ZFS raid1 on two disks":                 {zfsOn(answer.Raid1, disks(2)...), answer.Version92},
		"ZFS raid10 on four disks":               {zfsOn(answer.Raid10, disks(4)...), answer.Version92},
		"ZFS raidz-1 on three disks":             {zfsOn(answer.RaidZ1, disks(3)...), answer.Version92},
		"ZFS raidz-2 on four disks":              {zfsOn(answer.RaidZ2, disks(4)...), answer.Version92},
		"ZFS raidz-3 on five disks":              {zfsOn(answer.RaidZ3, disks(5)...), answer.Version92},
		"btrfs raid10 on six disks":              {btrfsOn(answer.Raid10, disks(6)...), answer.Version92},
		"ZFS raidz-3 picked by a filter": {func(a *answer.Answer) {
			zfsOn(answer.RaidZ3)(a)
			a.DiskSetup.Filter = map[string]string{"ID_MODEL": "Micron*"}
		}, answer.Version92},
		"a static network": {func(a *answer.Answer) {
			a.Network = answer.Network{Source: answer.NetworkFromAnswer, CIDR: "2001:db8::10/64", DNS: "10.0.0.1",
				Gateway: "2001:db8::1", Filter: map[string]string{"ID_NET_NAME": "enp1s0"}}
		}, answer.Version82},
		"fqdn from DHCP with a domain on 8.4": {func(a *answer.Answer) {
			a.Global.FQDN = answer.FQDN{FromDHCP: true, Domain: "example.com"}
		}, answer.Version84},
		"LVM sizes with no data volume": {func(a *answer.Answer) {
			a.DiskSetup.LVM = &answer.LVMOptions{HDSize: answer.Ptr(32.0), SwapSize: answer.Ptr(16.0), MaxVZ: answer.Ptr(0.0), MinFree: answer.Ptr(0.0)}
		}, answer.Version82},
		"both passwords (Render picks one)": {func(a *answer.Answer) { a.Global.RootPasswordHashed = "$6$salt$hash" }, answer.Version82},
		"only a hashed password on 8.3":     {func(a *answer.Answer) { a.Global.RootPassword, a.Global.RootPasswordHashed = "", "$y$j9T$salt$hash" }, answer.Version83},
		"a newer installer than this package knows": {func(a *answer.Answer) {
			a.Global.SubscriptionKey = "pbsc-0123456789"
		}, 10 << 16},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := validAnswer()
			tc.change(a)
			if err := answer.Validate(a, tc.v); err != nil {
				t.Errorf("Validate for %s: %v", tc.v, err)
			}
		})
	}
}

func TestValidateRefusesBadAnswers(t *testing.T) {
	tests := map[string]struct {
		change func(a *answer.Answer)
		v      answer.Version
		msg    string // the error names the key and says this
	}{
		"no keyboard":       {func(a *answer.Answer) { a.Global.Keyboard = "" }, answer.Version92, "global.keyboard: required"},
		"an unknown layout": {func(a *answer.Answer) { a.Global.Keyboard = "us" }, answer.Version92, `global.keyboard: "us": want one of de, de-ch`},
		"no country":        {func(a *answer.Answer) { a.Global.Country = "" }, answer.Version92, "global.country: required"},
		"an upper-case country": {func(a *answer.Answer) { a.Global.Country = "AT" }, answer.Version92,
			`global.country: "AT": want a lower-case two-letter`},
		"no fqdn": {func(a *answer.Answer) { a.Global.FQDN = answer.FQDN{} }, answer.Version92, "global.fqdn: required"},
		"a bare host name": {func(a *answer.Answer) { a.Global.FQDN.Name = "foobar" }, answer.Version92,
			`global.fqdn: "foobar": want a fully qualified domain name`},
		"a name with an underscore": {func(a *answer.Answer) { a.Global.FQDN.Name = "pve_1.example.com" }, answer.Version92, "global.fqdn"},
		"both a name and DHCP": {func(a *answer.Answer) { a.Global.FQDN.FromDHCP = true }, answer.Version92,
			"global.fqdn: set either a name or from DHCP"},
		"a domain without DHCP": {func(a *answer.Answer) { a.Global.FQDN.Domain = "example.com" }, answer.Version92,
			"global.fqdn.domain: only with the FQDN from DHCP"},
		"no mailto":        {func(a *answer.Answer) { a.Global.Mailto = "" }, answer.Version92, "global.mailto: required"},
		"a bad mailto":     {func(a *answer.Answer) { a.Global.Mailto = "root at example" }, answer.Version92, "global.mailto"},
		"no timezone":      {func(a *answer.Answer) { a.Global.Timezone = "" }, answer.Version92, "global.timezone: required"},
		"a bad timezone":   {func(a *answer.Answer) { a.Global.Timezone = "Europe/ Vienna" }, answer.Version92, "global.timezone"},
		"no root password": {func(a *answer.Answer) { a.Global.RootPassword = "" }, answer.Version82, "One of `global.root-password` or `global.root-password-hashed` must be set"},
		"a 7-character password on 8.4": {func(a *answer.Answer) { a.Global.RootPassword = "Passw0r" }, answer.Version84,
			"`global.root-password` must be at least 8 characters long"},
		"a password with a newline": {func(a *answer.Answer) { a.Global.RootPassword = "Passw0rd-x\n" }, answer.Version92,
			"global.root-password: contains a control character"},
		"a password that is not UTF-8": {func(a *answer.Answer) { a.Global.RootPassword = "Passw0rd\xff" }, answer.Version92,
			"global.root-password: not valid UTF-8"},
		"a hash that is no hash": {func(a *answer.Answer) { a.Global.RootPassword, a.Global.RootPasswordHashed = "", "plaintext" }, answer.Version92,
			"global.root-password-hashed: not a crypt(3) hash"},
		"a hash with a colon": {func(a *answer.Answer) { a.Global.RootPassword, a.Global.RootPasswordHashed = "", "$6$a:b$c" }, answer.Version92,
			"global.root-password-hashed"},
		"a bad reboot mode": {func(a *answer.Answer) { a.Global.RebootMode = "halt" }, answer.Version92,
			`global.reboot-mode: "halt": want one of reboot, power-off`},
		"an SSH key without its key": {func(a *answer.Answer) { a.Global.RootSSHKeys = []string{"ssh-ed25519 AAAA x", "ssh-ed25519"} }, answer.Version92,
			"global.root-ssh-keys[1]"},
		"a bad subscription key": {func(a *answer.Answer) { a.Global.SubscriptionKey = "pve4c-XYZ" }, answer.Version92,
			"global.subscription-key: not a subscription key"},

		"no network source": {func(a *answer.Answer) { a.Network.Source = "" }, answer.Version82, "network.source: required"},
		"a bad network source": {func(a *answer.Answer) { a.Network.Source = "static" }, answer.Version92,
			`network.source: "static": want one of from-dhcp, from-answer`},
		"an address with DHCP": {func(a *answer.Answer) { a.Network.CIDR = "10.0.0.2/24" }, answer.Version92,
			`network.cidr: only with source "from-answer"`},
		"a static network without its parts": {func(a *answer.Answer) { a.Network.Source = answer.NetworkFromAnswer }, answer.Version92,
			"network.cidr: required"},
		"a static network without a NIC filter": {func(a *answer.Answer) {
			a.Network = answer.Network{Source: answer.NetworkFromAnswer, CIDR: "10.0.0.2/24", DNS: "10.0.0.1", Gateway: "10.0.0.1"}
		}, answer.Version92, "network.filter: required"},
		"a bad address": {func(a *answer.Answer) {
			a.Network = answer.Network{Source: answer.NetworkFromAnswer, CIDR: "10.0.0.300/24", DNS: "10.0.0.1", Gateway: "10.0.0.1", Filter: map[string]string{"ID_NET_NAME": "x"}}
		}, answer.Version92, `network.cidr: "10.0.0.300/24"`},
		"a gateway of the other family": {func(a *answer.Answer) {
			a.Network = answer.Network{Source: answer.NetworkFromAnswer, CIDR: "10.0.0.2/24", DNS: "10.0.0.1", Gateway: "fe80::1", Filter: map[string]string{"ID_NET_NAME": "x"}}
		}, answer.Version92, "network.gateway"},
		"two DNS servers": {func(a *answer.Answer) {
			a.Network = answer.Network{Source: answer.NetworkFromAnswer, CIDR: "10.0.0.2/24", DNS: "10.0.0.1, 10.0.0.2", Gateway: "10.0.0.1", Filter: map[string]string{"ID_NET_NAME": "x"}}
		}, answer.Version92, "network.dns"},
		"a long pinned interface name": {func(a *answer.Answer) {
			a.Network.InterfaceNamePinning = &answer.InterfaceNamePinning{Mapping: map[string]string{"AB:CD:EF:12:34:56": "waytoolonginterfacename"}}
		}, answer.Version92, "interface name 'waytoolonginterfacename' for 'ab:cd:ef:12:34:56' cannot be longer than 15 characters"},
		"a pinned MAC that is no MAC": {func(a *answer.Answer) {
			a.Network.InterfaceNamePinning = &answer.InterfaceNamePinning{Mapping: map[string]string{"ab:cd": "lan0"}}
		}, answer.Version92, `network.interface-name-pinning.mapping."ab:cd"`},
		"a MAC pinned twice in two cases": {func(a *answer.Answer) {
			a.Network.InterfaceNamePinning = &answer.InterfaceNamePinning{Mapping: map[string]string{"AB:CD:EF:12:34:56": "lan0", "ab:cd:ef:12:34:56": "lan1"}}
		}, answer.Version92, "MAC ab:cd:ef:12:34:56 is mapped twice"},
		"one name for two MACs": {func(a *answer.Answer) {
			a.Network.InterfaceNamePinning = &answer.InterfaceNamePinning{Mapping: map[string]string{"ab:cd:ef:12:34:56": "lan0", "ab:cd:ef:12:34:57": "LAN0"}}
		}, answer.Version92, "is also given to"},

		"no filesystem": {func(a *answer.Answer) { a.DiskSetup.Filesystem = "" }, answer.Version92, "disk-setup.filesystem: required"},
		"an unknown filesystem": {func(a *answer.Answer) { a.DiskSetup.Filesystem = "ntfs" }, answer.Version92,
			`disk-setup.filesystem: "ntfs": want one of ext4, xfs, zfs, btrfs`},
		"neither disks nor a filter": {func(a *answer.Answer) { a.DiskSetup.DiskList = nil }, answer.Version92, "Need either 'disk-list' or 'filter' set"},
		"both disks and a filter": {func(a *answer.Answer) { a.DiskSetup.Filter = map[string]string{"ID_SERIAL": "*"} }, answer.Version92,
			"Cannot use both, 'disk-list' and 'filter'"},
		"ext4 on two disks": {func(a *answer.Answer) { a.DiskSetup.DiskList = disks(2) }, answer.Version92,
			"disk-setup.disk-list: filesystem ext4 takes one disk, got 2"},
		"a duplicate disk": {zfsOn(answer.Raid1, "sda", "sda"), answer.Version92, "List of disks contains duplicate device sda"},
		"a disk path": {func(a *answer.Answer) { a.DiskSetup.DiskList = []string{"/dev/sda"} }, answer.Version92,
			`disk-setup.disk-list[0]: "/dev/sda": want a kernel device name`},
		"an empty filter value": {func(a *answer.Answer) {
			a.DiskSetup.DiskList, a.DiskSetup.Filter = nil, map[string]string{"ID_SERIAL": ""}
		}, answer.Version92,
			`disk-setup.filter."ID_SERIAL": required`},
		"an empty filter key": {func(a *answer.Answer) { a.DiskSetup.DiskList, a.DiskSetup.Filter = nil, map[string]string{"": "x"} }, answer.Version92,
			"disk-setup.filter: an empty udev property name"},
		"a bad filter match": {func(a *answer.Answer) { a.DiskSetup.FilterMatch = "some" }, answer.Version92, `disk-setup.filter-match: "some"`},
		"ZFS options on ext4": {func(a *answer.Answer) { a.DiskSetup.ZFS = &answer.ZFSOptions{} }, answer.Version92,
			"disk-setup.zfs: make sure only 'lvm' options are set for filesystem ext4"},
		"LVM options on ZFS": {func(a *answer.Answer) {
			zfsOn(answer.Raid0, "sda")(a)
			a.DiskSetup.LVM = &answer.LVMOptions{}
		}, answer.Version92, "disk-setup.lvm: make sure only 'zfs' options are set"},
		"ZFS without a RAID level": {func(a *answer.Answer) { a.DiskSetup.Filesystem = answer.FilesystemZFS }, answer.Version92,
			"disk-setup.zfs.raid: required for filesystem zfs"},
		"btrfs without a RAID level": {func(a *answer.Answer) { a.DiskSetup.Filesystem = answer.FilesystemBtrfs }, answer.Version92,
			"disk-setup.btrfs.raid: required for filesystem btrfs"},
		"an upper-case RAID level": {zfsOn("RAID1", disks(2)...), answer.Version92,
			`disk-setup.zfs.raid: "RAID1": write it in lower case, "raid1"`},
		"raidz for btrfs":    {btrfsOn(answer.RaidZ1, disks(3)...), answer.Version92, `disk-setup.btrfs.raid: "raidz-1": want one of raid0, raid1, raid10`},
		"an unknown level":   {zfsOn("raid5", disks(3)...), answer.Version92, `disk-setup.zfs.raid: "raid5"`},
		"ZFS raid1 on one":   {zfsOn(answer.Raid1, disks(1)...), answer.Version92, "ZFS RAID1 needs at least 2 disks, got 1"},
		"ZFS raid10 on one":  {zfsOn(answer.Raid10, disks(1)...), answer.Version92, "ZFS RAID10 needs at least 4 disks, got 1"},
		"ZFS raid10 on five": {zfsOn(answer.Raid10, disks(5)...), answer.Version92, "ZFS RAID10 needs an even number of disks, got 5"},
		"ZFS raidz-1 on two": {zfsOn(answer.RaidZ1, disks(2)...), answer.Version92, "ZFS RAIDZ-1 needs at least 3 disks, got 2"},
		"ZFS raidz-2 on three": {zfsOn(answer.RaidZ2, disks(3)...), answer.Version92,
			"ZFS RAIDZ-2 needs at least 4 disks, got 3"},
		"ZFS raidz-3 on four": {zfsOn(answer.RaidZ3, disks(4)...), answer.Version92, "ZFS RAIDZ-3 needs at least 5 disks, got 4"},
		"btrfs raid1 on one":  {btrfsOn(answer.Raid1, disks(1)...), answer.Version92, "Btrfs RAID1 needs at least 2 disks, got 1"},
		"btrfs raid10 on three": {btrfsOn(answer.Raid10, disks(3)...), answer.Version92,
			"Btrfs RAID10 needs at least 4 disks, got 3"},
		"a bad ashift": {func(a *answer.Answer) {
			zfsOn(answer.Raid0, "sda")(a)
			a.DiskSetup.ZFS.Ashift = answer.Ptr(8)
		}, answer.Version92, "disk-setup.zfs.ashift: 8: want 9 to 16"},
		"a small ARC": {func(a *answer.Answer) {
			zfsOn(answer.Raid0, "sda")(a)
			a.DiskSetup.ZFS.ArcMax = answer.Ptr(32)
		}, answer.Version92, "disk-setup.zfs.arc-max: 32: want at least 64"},
		"four copies": {func(a *answer.Answer) {
			zfsOn(answer.Raid0, "sda")(a)
			a.DiskSetup.ZFS.Copies = answer.Ptr(4)
		}, answer.Version92, "disk-setup.zfs.copies: 4: want 1 to 3"},
		"an unknown compression": {func(a *answer.Answer) {
			zfsOn(answer.Raid0, "sda")(a)
			a.DiskSetup.ZFS.Compress = "brotli"
		}, answer.Version92, `disk-setup.zfs.compress: "brotli"`},
		"an infinite disk size": {func(a *answer.Answer) {
			zfsOn(answer.Raid0, "sda")(a)
			a.DiskSetup.ZFS.HDSize = answer.Ptr(math.Inf(1))
		}, answer.Version92, "disk-setup.zfs.hdsize: want a number of GiB"},
		"a negative LVM size": {func(a *answer.Answer) { a.DiskSetup.LVM = &answer.LVMOptions{MaxRoot: answer.Ptr(-1.0)} }, answer.Version92,
			"disk-setup.lvm.maxroot: -1: want a size of 0 GiB or more"},
		"too much swap": {func(a *answer.Answer) {
			a.DiskSetup.LVM = &answer.LVMOptions{HDSize: answer.Ptr(32.0), SwapSize: answer.Ptr(16.01)}
		}, answer.Version92, "Swap size 16.01 GiB cannot be greater than 16 GiB (hard disk size / 2)"},

		"a webhook without a URL": {func(a *answer.Answer) { a.PostInstallationWebhook = &answer.Webhook{} }, answer.Version92,
			"post-installation-webhook.url: required"},
		"a webhook on FTP": {func(a *answer.Answer) { a.PostInstallationWebhook = &answer.Webhook{URL: "ftp://h/x"} }, answer.Version92,
			`post-installation-webhook.url: "ftp://h/x": want an http or https URL`},
		"a short fingerprint": {func(a *answer.Answer) {
			a.PostInstallationWebhook = &answer.Webhook{URL: "https://h/", CertFingerprint: "ab:cd"}
		}, answer.Version92,
			"post-installation-webhook.cert-fingerprint"},
		"a first-boot without source": {func(a *answer.Answer) { a.FirstBoot = &answer.FirstBoot{} }, answer.Version92,
			"first-boot.source: required"},
		"a first-boot from a URL without one": {func(a *answer.Answer) { a.FirstBoot = &answer.FirstBoot{Source: answer.FirstBootFromURL} }, answer.Version92,
			"first-boot executable source set to URL, but none specified!"},
		"a first-boot from the ISO with a URL": {func(a *answer.Answer) {
			a.FirstBoot = &answer.FirstBoot{Source: answer.FirstBootFromISO, URL: "https://h/x"}
		}, answer.Version92, `first-boot.url: only with source "from-url"`},
		"a bad first-boot ordering": {func(a *answer.Answer) {
			a.FirstBoot = &answer.FirstBoot{Source: answer.FirstBootFromISO, Ordering: "later"}
		}, answer.Version92, `first-boot.ordering: "later"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := validAnswer()
			tc.change(a)
			err := answer.Validate(a, tc.v)
			if !errors.Is(err, answer.ErrInvalid) {
				t.Fatalf("Validate error = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Validate error %q lacks %q", err, tc.msg)
			}
			if pw := a.Global.RootPassword; pw != "" && strings.Contains(err.Error(), pw) {
				t.Errorf("Validate error %q quotes the password", err)
			}
			if _, rerr := answer.Render(a, tc.v, answer.RenderOptions{}); !errors.Is(rerr, answer.ErrInvalid) {
				t.Errorf("Render error = %v, want ErrInvalid as Validate", rerr)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	a := validAnswer()
	a.Global.Keyboard, a.Global.Country, a.Network.Source = "xx", "XX", ""
	err := answer.Validate(a, answer.Version92)
	for _, key := range []string{"global.keyboard", "global.country", "network.source"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Validate error %v does not report %s", err, key)
		}
	}
}

func TestValidateRefusesUnsupportedVersions(t *testing.T) {
	tests := map[string]answer.Version{
		"an unknown version": 0,
		"8.1":                8<<16 | 1<<8,
		"7.4":                7<<16 | 4<<8,
	}
	for name, v := range tests {
		t.Run(name, func(t *testing.T) {
			if err := answer.Validate(validAnswer(), v); !errors.Is(err, answer.ErrUnsupported) {
				t.Errorf("Validate for %s: error = %v, want ErrUnsupported", v, err)
			}
		})
	}
	if err := answer.Validate(nil, answer.Version92); !errors.Is(err, answer.ErrInvalid) {
		t.Errorf("Validate(nil) error = %v, want ErrInvalid", err)
	}
}
