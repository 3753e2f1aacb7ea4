package main

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/discovery/agent"
)

// emuDisk is a disk as the installer's udev index holds it.
type emuDisk struct {
	name string
	size uint64
	udev map[string]string
}

// machineDisks waits for the disks to settle and returns them in the
// order of the installer's udev index, each with the udev properties
// udev's persistent-storage rules give it (ID_SERIAL, ID_SERIAL_SHORT,
// ID_MODEL, DEVNAME), leaving out skip (the installer's own medium).
func machineDisks(skip string) []emuDisk {
	last := -1
	for i := 0; i < 20; i++ {
		n, _ := filepath.Glob("/sys/block/*")
		if len(n) == last {
			break
		}
		last = len(n)
		time.Sleep(500 * time.Millisecond)
	}
	var out []emuDisk
	for _, d := range agent.Collect(agent.Paths{}).Disks {
		if d.Name == skip {
			continue
		}
		u := map[string]string{"DEVNAME": "/dev/" + d.Name}
		if d.Serial != "" {
			u["ID_SERIAL_SHORT"] = d.Serial
			u["ID_SERIAL"] = d.Serial
			if d.Model != "" {
				u["ID_MODEL"] = strings.ReplaceAll(d.Model, " ", "_")
				u["ID_SERIAL"] = u["ID_MODEL"] + "_" + d.Serial
			}
		}
		out = append(out, emuDisk{name: d.Name, size: d.SizeBytes, udev: u})
	}
	slices.SortFunc(out, func(a, b emuDisk) int { return strings.Compare(a.name, b.name) })
	return out
}

// chooseDisk picks the boot disk of an ext4/xfs answer as the installer
// does (reference §1.4): the disk-list's one disk, matched by the end of
// its path, or the first disk of the udev index on which any filter key
// matches its glob. No match is an error, as the installer's is.
func chooseDisk(ds answer.DiskSetup, disks []emuDisk) (emuDisk, error) {
	for _, want := range ds.DiskList {
		for _, d := range disks {
			if strings.HasSuffix("/dev/"+d.name, want) {
				return d, nil
			}
		}
		return emuDisk{}, fmt.Errorf("disk-list names %s, which this machine does not have", want)
	}
	keys := make([]string, 0, len(ds.Filter))
	for k := range ds.Filter {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, d := range disks {
		for _, k := range keys {
			if v, ok := d.udev[k]; ok {
				if m, _ := path.Match(ds.Filter[k], v); m {
					return d, nil
				}
			}
		}
	}
	return emuDisk{}, fmt.Errorf("no disk matches the filter %v", ds.Filter)
}
