package discovery

import (
	"slices"
	"time"
)

// Report is what the discovery agent posts: the machine as its own
// kernel sees it. Sizes are in bytes.
type Report struct {
	// NICs are the machine's network interfaces; at least one.
	NICs []NIC `json:"nics"`
	// DMI is the firmware's system information.
	DMI DMI `json:"dmi"`
	// CPU is the processors' model and count.
	CPU CPU `json:"cpu"`
	// MemoryBytes is the memory the kernel sees.
	MemoryBytes uint64 `json:"memory_bytes"`
	// Disks are the machine's whole disks (no partitions, no loop,
	// RAM or optical devices).
	Disks []Disk `json:"disks"`
	// BootMAC is the MAC of the NIC the machine booted from (one of
	// NICs), empty when the agent could not tell.
	BootMAC string `json:"boot_mac,omitempty"`
	// BMCAddress is the LAN address of the machine's BMC as the agent
	// read it in-band, empty when it has none or could not tell.
	BMCAddress string `json:"bmc_address,omitempty"`
	// BMCPort is the port the BMC's service listens on at BMCAddress,
	// 0 when the machine did not say (the protocol's own).
	BMCPort uint16 `json:"bmc_port,omitempty"`
	// BMCKind says where BMCAddress was read: [BMCRedfish] or
	// [BMCIPMI]; empty without an address.
	BMCKind string `json:"bmc_kind,omitempty"`
	// BMCIPMI is the system interface of the machine's IPMI BMC as its
	// firmware names it (SMBIOS type 38): "kcs", "smic", "bt", "ssif"
	// or "unknown"; empty when the firmware names no IPMI BMC.
	BMCIPMI string `json:"bmc_ipmi,omitempty"`
}

// Where a report's BMC address was read ([Report].BMCKind).
const (
	// BMCRedfish: the Redfish service address of the machine's Redfish
	// host interface (SMBIOS type 42, DMTF DSP0270).
	BMCRedfish = "redfish"
	// BMCIPMI: the LAN address the IPMI BMC gave through the host's
	// IPMI device (Get LAN Configuration Parameters).
	BMCIPMI = "ipmi"
)

// IPMIInterfaces are the IPMI system interfaces SMBIOS type 38 names,
// by its interface type number ([Report].BMCIPMI).
var IPMIInterfaces = []string{"unknown", "kcs", "smic", "bt", "ssif"}

// NIC is one network interface.
type NIC struct {
	// MAC is the interface's address, lower-case with colons.
	MAC string `json:"mac"`
	// Link is the kernel's operational state ("up", "down", "unknown"…).
	Link string `json:"link,omitempty"`
	// SpeedMbps is the link speed, 0 when unknown or down.
	SpeedMbps uint32 `json:"speed_mbps,omitempty"`
	// Driver is the kernel driver's name.
	Driver string `json:"driver,omitempty"`
}

// DMI is the system information of the firmware (SMBIOS type 1).
type DMI struct {
	Vendor  string `json:"vendor,omitempty"`
	Product string `json:"product,omitempty"`
	Serial  string `json:"serial,omitempty"`
	UUID    string `json:"uuid,omitempty"`
}

// CPU is the processors: the model name and the count of logical CPUs.
type CPU struct {
	Model   string `json:"model,omitempty"`
	Threads uint32 `json:"threads,omitempty"`
}

// Disk is one whole disk.
type Disk struct {
	// Name is the kernel's name ("sda", "nvme0n1", "vdb").
	Name string `json:"name"`
	// SizeBytes is its size.
	SizeBytes uint64 `json:"size_bytes"`
	Model     string `json:"model,omitempty"`
	Serial    string `json:"serial,omitempty"`
	WWN       string `json:"wwn,omitempty"`
	// Rotational is true for a spinning disk.
	Rotational bool `json:"rotational"`
	// Transport is the bus ("sata", "sas", "nvme", "virtio", "usb"…),
	// empty when the kernel does not say.
	Transport string `json:"transport,omitempty"`
}

// Record is one inbox entry: a machine's last report and when it was
// first and last seen.
type Record struct {
	// ID is the entry's key: the lowest MAC of its first report.
	ID string `json:"id"`
	Report
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
}

// MACs returns the report's MAC addresses.
func (r Report) MACs() []string {
	out := make([]string, 0, len(r.NICs))
	for _, n := range r.NICs {
		out = append(out, n.MAC)
	}
	return out
}

// Disk returns the disk whose serial is serial.
func (r Report) Disk(serial string) (Disk, bool) {
	if serial == "" {
		return Disk{}, false
	}
	for _, d := range r.Disks {
		if d.Serial == serial {
			return d, true
		}
	}
	return Disk{}, false
}

// Clone returns a deep copy of r.
func (r Record) Clone() Record {
	r.NICs = slices.Clone(r.NICs)
	r.Disks = slices.Clone(r.Disks)
	return r
}

// key returns the ID a new entry for the report gets: its lowest MAC.
func (r Report) key() string {
	if len(r.NICs) == 0 {
		return ""
	}
	return slices.Min(r.MACs())
}

// placeholderSerials are DMI serials firmware writes when nobody set
// one; they name no machine.
var placeholderSerials = []string{
	"", "0", "00000000", "0123456789", "none", "not specified", "not applicable",
	"default string", "system serial number", "to be filled by o.e.m.", "n/a",
}

// UsableSerial reports whether a DMI serial names a machine: not empty
// and not a placeholder firmware writes ("To Be Filled By O.E.M.").
func UsableSerial(s string) bool {
	return !slices.Contains(placeholderSerials, toLower(s))
}

func toLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Same reports whether reports a and b come from the same machine: they
// share a MAC, or the same usable DMI serial.
func Same(a, b Report) bool {
	if a.DMI.Serial == b.DMI.Serial && UsableSerial(a.DMI.Serial) {
		return true
	}
	for _, n := range a.NICs {
		for _, m := range b.NICs {
			if n.MAC == m.MAC {
				return true
			}
		}
	}
	return false
}

// Pins returns what a registration of the machine pins: its MACs, and
// its DMI serial (when usable) and UUID.
func (r Report) Pins() (macs []string, serial, uuid string) {
	if UsableSerial(r.DMI.Serial) {
		serial = r.DMI.Serial
	}
	return r.MACs(), serial, r.DMI.UUID
}
