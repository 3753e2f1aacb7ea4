package registry

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/plasmactl/plasma-node/answer"
)

// ErrInvalidFilesystem is wrapped by the error of a filesystem setting
// the installer or the boot disk cannot take.
var ErrInvalidFilesystem = errors.New("invalid filesystem")

// Filesystem is the boot disk's filesystem in a node's answer
// (disk-setup.filesystem and its options). The zero value, or none, is
// ext4.
type Filesystem struct {
	// Type is ext4 (the default), xfs, zfs or btrfs.
	Type answer.Filesystem `json:"type"`
	// Raid is the RAID level of zfs or btrfs. The boot disk is one disk,
	// so only raid0 (the default) fits it: a level that needs more disks
	// is refused.
	Raid answer.RaidLevel `json:"raid,omitempty"`
	// Ashift is zfs's ashift, 9 to 16; 0 is the installer's (12).
	Ashift int `json:"ashift,omitempty"`
	// Compress is the compression of zfs (on, off, lzjb, lz4, zle, gzip
	// or zstd) or btrfs (on, off, zlib, lzo or zstd; installers from
	// 8.3); empty is the installer's.
	Compress string `json:"compress,omitempty"`
}

// Check refuses a filesystem setting that no answer on the one boot
// disk could carry: an unknown type, a RAID level or a ZFS option on a
// filesystem without it, or a RAID level that needs more disks than the
// boot disk. What a given installer release refuses besides (btrfs
// before it had it, a compression it does not know) [answer.Validate]
// says of the answer built with it.
func (f Filesystem) Check() error {
	bad := func(format string, a ...any) error {
		return invalid(ErrInvalidFilesystem, "filesystem: "+format, a...)
	}
	switch f.Type {
	case "", answer.FilesystemExt4, answer.FilesystemXFS:
		if f.Raid != "" || f.Ashift != 0 || f.Compress != "" {
			return bad("%s takes no raid, ashift or compress; want zfs for them (btrfs takes raid and compress)", f.typeName())
		}
	case answer.FilesystemZFS, answer.FilesystemBtrfs:
		levels := []answer.RaidLevel{answer.Raid0, answer.Raid1, answer.Raid10}
		if f.Type == answer.FilesystemZFS {
			levels = append(levels, answer.RaidZ1, answer.RaidZ2, answer.RaidZ3)
		}
		if f.Raid != "" && !slices.Contains(levels, f.Raid) {
			return bad("%s raid %q: want one of %v", f.Type, f.Raid, levels)
		}
		if n := answer.MinDisks(f.Raid); n > 1 {
			return bad("%s %s needs at least %d disks, and the boot disk is one disk: want raid0 (data pools take the other disks)", f.Type, f.Raid, n)
		}
		if f.Type == answer.FilesystemBtrfs && f.Ashift != 0 {
			return bad("btrfs takes no ashift; it is a zfs option")
		}
		if f.Ashift != 0 && (f.Ashift < 9 || f.Ashift > 16) {
			return bad("zfs ashift %d: want 9 to 16, or none for the installer's 12", f.Ashift)
		}
	default:
		return bad("type %q: want ext4, xfs, zfs or btrfs", f.Type)
	}
	return nil
}

func (f Filesystem) typeName() string {
	if f.Type == "" {
		return string(answer.FilesystemExt4)
	}
	return string(f.Type)
}

// diskSetup is the answer's disk-setup for the boot disk with f.
func (f Filesystem) diskSetup(disk answer.BootDisk) answer.DiskSetup {
	d := answer.DiskSetup{Filesystem: answer.Filesystem(f.typeName()), DiskList: disk.DiskList(), Filter: disk.UdevFilter()}
	raid := cmp.Or(f.Raid, answer.Raid0)
	switch f.Type {
	case answer.FilesystemZFS:
		d.ZFS = &answer.ZFSOptions{Raid: raid, Compress: f.Compress}
		if f.Ashift != 0 {
			d.ZFS.Ashift = &f.Ashift
		}
	case answer.FilesystemBtrfs:
		d.Btrfs = &answer.BtrfsOptions{Raid: raid, Compress: f.Compress}
	}
	return d
}

// String is "zfs raid0" (with ", compress lz4" or ", ashift 12" when
// set), "ext4" for the zero value.
func (f Filesystem) String() string {
	s := f.typeName()
	if f.Type == answer.FilesystemZFS || f.Type == answer.FilesystemBtrfs {
		s += " " + string(cmp.Or(f.Raid, answer.Raid0))
	}
	if f.Compress != "" {
		s += ", compress " + f.Compress
	}
	if f.Ashift != 0 {
		s += fmt.Sprintf(", ashift %d", f.Ashift)
	}
	return s
}
