package agent

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// Paths are where [Collect] reads the machine: the mounted sysfs and
// procfs. The zero value reads /sys and /proc.
type Paths struct {
	Sys, Proc string
}

func (p Paths) sys(elem ...string) string {
	root := p.Sys
	if root == "" {
		root = "/sys"
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

func (p Paths) proc(elem ...string) string {
	root := p.Proc
	if root == "" {
		root = "/proc"
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// Collect reads the machine's report from sysfs and procfs: the NICs
// with a device (no loopback, bridge or tunnel), DMI, the CPUs, the
// memory, the whole disks with a device (no loop, RAM, optical or
// device-mapper devices), and the BMC the firmware's SMBIOS structures
// name (a Redfish host interface's service address, an IPMI BMC's
// interface). Free text is cut to what [discovery.Decode]
// takes. It only reads.
func Collect(p Paths) discovery.Report {
	return collect(p, readBMC(p))
}

// collect is [Collect] with the BMC already read from the SMBIOS tables
// (the agent reads them once, before it loads modules).
func collect(p Paths, bmc bmcInfo) discovery.Report {
	r := discovery.Report{
		NICs: nics(p),
		DMI: discovery.DMI{
			Vendor: text(p.sys("class/dmi/id/sys_vendor")), Product: text(p.sys("class/dmi/id/product_name")),
			Serial: text(p.sys("class/dmi/id/product_serial")), UUID: uuid(text(p.sys("class/dmi/id/product_uuid"))),
		},
		CPU:         cpu(p),
		MemoryBytes: memory(p),
		Disks:       disks(p),
	}
	bmc.apply(&r)
	return r
}

// read returns a sysfs attribute, trimmed; empty when unreadable.
func read(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// text is read made fit for a free-text field: printable ASCII, no
// surrounding space, at most 128 bytes.
func text(path string) string { return clean(read(path)) }

func clean(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = ' '
		}
	}
	s = strings.TrimSpace(string(b))
	if len(s) > 128 {
		s = strings.TrimSpace(s[:128])
	}
	return s
}

func uuid(s string) string {
	if len(s) != 36 || strings.Count(s, "-") != 4 {
		return ""
	}
	return strings.ToLower(s)
}

func nics(p Paths) []discovery.NIC {
	names, _ := filepath.Glob(p.sys("class/net/*"))
	slices.Sort(names)
	var out []discovery.NIC
	for _, dir := range names {
		if _, err := os.Stat(filepath.Join(dir, "device")); err != nil {
			continue // virtual: lo, bridges, tunnels
		}
		if read(filepath.Join(dir, "type")) != "1" {
			continue // not Ethernet
		}
		mac, ok := answer.CanonicalMAC(read(filepath.Join(dir, "address")))
		if !ok {
			continue
		}
		n := discovery.NIC{MAC: mac, Link: read(filepath.Join(dir, "operstate"))}
		if s, err := strconv.ParseInt(read(filepath.Join(dir, "speed")), 10, 64); err == nil && s > 0 && s < 1<<31 {
			n.SpeedMbps = uint32(s)
		}
		if drv, err := os.Readlink(filepath.Join(dir, "device", "driver")); err == nil {
			n.Driver = filepath.Base(drv)
		}
		out = append(out, n)
		if len(out) == discovery.MaxNICs {
			break
		}
	}
	return out
}

func cpu(p Paths) discovery.CPU {
	b, err := os.ReadFile(p.proc("cpuinfo"))
	if err != nil {
		return discovery.CPU{}
	}
	var c discovery.CPU
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "processor":
			c.Threads++
		case "model name":
			if c.Model == "" {
				c.Model = clean(v)
			}
		}
	}
	return c
}

func memory(p Paths) uint64 {
	b, err := os.ReadFile(p.proc("meminfo"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// skipDisk reports the block devices that are not disks a node installs
// onto.
func skipDisk(name string) bool {
	for _, pre := range []string{"loop", "ram", "sr", "zram", "dm-", "md", "fd", "nbd"} {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

func disks(p Paths) []discovery.Disk {
	names, _ := filepath.Glob(p.sys("block/*"))
	slices.Sort(names)
	var out []discovery.Disk
	for _, dir := range names {
		name := filepath.Base(dir)
		if skipDisk(name) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "device")); err != nil {
			continue
		}
		sectors, _ := strconv.ParseUint(read(filepath.Join(dir, "size")), 10, 64)
		d := discovery.Disk{
			Name: name, SizeBytes: sectors * 512,
			Model:      text(filepath.Join(dir, "device", "model")),
			Serial:     diskSerial(dir),
			WWN:        clean(firstOf(read(filepath.Join(dir, "wwid")), read(filepath.Join(dir, "device", "wwid")))),
			Rotational: read(filepath.Join(dir, "queue", "rotational")) == "1",
			Transport:  transport(dir, name),
		}
		out = append(out, d)
		if len(out) == discovery.MaxDisks {
			break
		}
	}
	return out
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// diskSerial is the disk's serial as udev's ID_SERIAL_SHORT has it: the
// block device's serial (virtio), the device's (NVMe), or the SCSI
// inquiry's unit serial page (SATA, SAS, USB).
func diskSerial(dir string) string {
	if s := firstOf(text(filepath.Join(dir, "serial")), text(filepath.Join(dir, "device", "serial"))); s != "" {
		return s
	}
	b, err := os.ReadFile(filepath.Join(dir, "device", "vpd_pg80"))
	if err != nil || len(b) < 4 {
		return ""
	}
	n := int(b[2])<<8 | int(b[3])
	if 4+n > len(b) {
		n = len(b) - 4
	}
	return clean(string(b[4 : 4+n]))
}

// transport says the disk's bus from its name and its device's path.
func transport(dir, name string) string {
	switch {
	case strings.HasPrefix(name, "nvme"):
		return "nvme"
	case strings.HasPrefix(name, "vd"):
		return "virtio"
	}
	target, err := filepath.EvalSymlinks(filepath.Join(dir, "device"))
	if err != nil {
		return ""
	}
	switch {
	case strings.Contains(target, "/usb"):
		return "usb"
	case strings.Contains(target, "/ata"):
		return "sata"
	case strings.Contains(target, "/virtio"):
		return "virtio"
	case strings.Contains(target, "/host"):
		return "scsi"
	}
	return ""
}
