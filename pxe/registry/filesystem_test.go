package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
)

// TestTheSitesFilesystemGoesIntoDiskSetup: the site's filesystem (or a
// registration's override of it) is the answer's disk-setup on the boot
// disk; none is ext4.
func TestTheSitesFilesystemGoesIntoDiskSetup(t *testing.T) {
	ashift := 13
	byName := answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}
	serial := map[string]string{"ID_SERIAL": "*S1*"}
	tests := map[string]struct {
		site, override *Filesystem
		disk           answer.BootDisk
		want           answer.DiskSetup
	}{
		"no setting is ext4": {disk: byName, want: answer.DiskSetup{Filesystem: answer.FilesystemExt4, DiskList: []string{"sda"}}},
		"xfs":                {site: &Filesystem{Type: answer.FilesystemXFS}, want: answer.DiskSetup{Filesystem: answer.FilesystemXFS, Filter: serial}},
		"zfs is raid0 on the one boot disk, with its options": {
			site: &Filesystem{Type: answer.FilesystemZFS, Compress: "lz4", Ashift: 13},
			want: answer.DiskSetup{Filesystem: answer.FilesystemZFS, Filter: serial, ZFS: &answer.ZFSOptions{Raid: answer.Raid0, Compress: "lz4", Ashift: &ashift}},
		},
		"btrfs with compression": {
			site: &Filesystem{Type: answer.FilesystemBtrfs, Raid: answer.Raid0, Compress: "zstd"},
			want: answer.DiskSetup{Filesystem: answer.FilesystemBtrfs, Filter: serial, Btrfs: &answer.BtrfsOptions{Raid: answer.Raid0, Compress: "zstd"}},
		},
		"a registration's override wins over the site's": {
			site: &Filesystem{Type: answer.FilesystemXFS}, override: &Filesystem{Type: answer.FilesystemZFS},
			want: answer.DiskSetup{Filesystem: answer.FilesystemZFS, Filter: serial, ZFS: &answer.ZFSOptions{Raid: answer.Raid0}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := Registration{Name: "pve1", BootDisk: answer.BootDisk{Kind: answer.BootDiskSerial, Value: "S1"}}
			if tc.disk != (answer.BootDisk{}) {
				r.BootDisk = tc.disk
			}
			if tc.override != nil {
				r.Settings = &Site{Filesystem: tc.override}
			}
			a, err := Build(r, BuildOptions{Site: Site{Filesystem: tc.site}, RootPassword: "probe-password"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, a.DiskSetup); diff != "" {
				t.Errorf("disk-setup (-want +got):\n%s", diff)
			}
			if err := answer.Validate(a, answer.LatestVersion); err != nil {
				t.Errorf("the newest installer refuses it: %v", err)
			}
			if err := (Site{Filesystem: tc.site}).Check(); err != nil {
				t.Errorf("Site.Check: %v", err)
			}
		})
	}
}

// TestSiteCheckRefusesAFilesystemTheBootDiskCannotTake: site.json's
// filesystem is checked when the site is loaded; a refusal names the
// setting and says what would be valid.
func TestSiteCheckRefusesAFilesystemTheBootDiskCannotTake(t *testing.T) {
	tests := map[string]struct {
		fs   Filesystem
		want string
	}{
		"an unknown type":                 {Filesystem{Type: "ntfs"}, `filesystem: type "ntfs": want ext4, xfs, zfs or btrfs`},
		"zfs raid1 needs two disks":       {Filesystem{Type: answer.FilesystemZFS, Raid: answer.Raid1}, "filesystem: zfs raid1 needs at least 2 disks, and the boot disk is one disk: want raid0 (data pools take the other disks)"},
		"zfs raidz-2 needs four disks":    {Filesystem{Type: answer.FilesystemZFS, Raid: answer.RaidZ2}, "filesystem: zfs raidz-2 needs at least 4 disks, and the boot disk is one disk: want raid0 (data pools take the other disks)"},
		"btrfs raid10 needs four disks":   {Filesystem{Type: answer.FilesystemBtrfs, Raid: answer.Raid10}, "filesystem: btrfs raid10 needs at least 4 disks, and the boot disk is one disk: want raid0 (data pools take the other disks)"},
		"btrfs has no raidz":              {Filesystem{Type: answer.FilesystemBtrfs, Raid: answer.RaidZ1}, `filesystem: btrfs raid "raidz-1": want one of [raid0 raid1 raid10]`},
		"ext4 takes no raid":              {Filesystem{Type: answer.FilesystemExt4, Raid: answer.Raid0}, "filesystem: ext4 takes no raid, ashift or compress; want zfs for them (btrfs takes raid and compress)"},
		"ashift out of range":             {Filesystem{Type: answer.FilesystemZFS, Ashift: 20}, "filesystem: zfs ashift 20: want 9 to 16, or none for the installer's 12"},
		"btrfs takes no ashift":           {Filesystem{Type: answer.FilesystemBtrfs, Ashift: 12}, "filesystem: btrfs takes no ashift; it is a zfs option"},
		"a compression zfs does not know": {Filesystem{Type: answer.FilesystemZFS, Compress: "brotli"}, "disk-setup.zfs.compress"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := (Site{Filesystem: &tc.fs}).Check()
			if err == nil {
				t.Fatal("Site.Check took it")
			}
			if !errors.Is(err, ErrInvalidFilesystem) && !errors.Is(err, answer.ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalidFilesystem or the installer's refusal", err)
			}
			if got := err.Error(); !strings.Contains(got, tc.want) {
				t.Errorf("err = %q, want it to say %q", got, tc.want)
			}
		})
	}
}
