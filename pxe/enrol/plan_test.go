package enrol_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

var now = time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)

// machine is an inbox entry of MAC 52:54:00:00:00:<i>, DMI serial
// SRV-<i>, and the disks given.
func machine(i int, disks ...discovery.Disk) discovery.Record {
	mac := "52:54:00:00:00:0" + string(rune('0'+i))
	return discovery.Record{ID: mac, Report: discovery.Report{
		NICs: []discovery.NIC{{MAC: mac, Driver: "virtio_net"}}, BootMAC: mac,
		DMI: discovery.DMI{Vendor: "QEMU", Product: "Standard PC", Serial: "SRV-" + string(rune('0'+i))},
		CPU: discovery.CPU{Threads: 4}, MemoryBytes: 8 << 30, Disks: disks,
	}}
}

func disk(name, serial string, size enrol.Size, rotational bool) discovery.Disk {
	return discovery.Disk{Name: name, Serial: serial, SizeBytes: uint64(size), Rotational: rotational, Model: "QEMU HARDDISK", Transport: "sata"}
}

// state returns a state of rules, each checked.
func state(t *testing.T, rules ...enrol.Rule) enrol.State {
	t.Helper()
	for _, r := range rules {
		if err := r.Check(registry.Site{}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := enrol.State{}.Apply(rules)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var ssdBoot = enrol.Rule{Name: "ssd-boot", Priority: 10, Hostname: "pve-{n:02}",
	Match:   enrol.Match{Disks: &enrol.DiskMatch{DiskFilter: enrol.DiskFilter{MinSize: 200e9, Rotational: no()}}},
	Disks:   enrol.Disks{Boot: &enrol.BootDisk{DiskFilter: enrol.DiskFilter{MinSize: 200e9, Rotational: no()}}},
	Address: &enrol.Address{Pool: "mgmt", CIDR: "10.0.0.0/24", Range: "10.0.0.100-10.0.0.101", Gateway: "10.0.0.1", DNS: "10.0.0.1"}}

// withPool is r with a mirror of every spinning disk left.
func withPool(r enrol.Rule) enrol.Rule {
	r.Disks.Pools = []enrol.Pool{{Name: "tank", Layout: registry.LayoutMirror, Disks: enrol.DiskFilter{Rotational: yes()}}}
	return r
}

var anyQEMU = enrol.Rule{Name: "qemu", Priority: 20, Hostname: "vm-{dmi.serial}", Match: enrol.Match{Vendor: "qemu", NICs: &enrol.Range{Min: 1, Max: 2}}}

func TestDecideExplainsEachMachine(t *testing.T) {
	tests := map[string]struct {
		rules []enrol.Rule
		rec   discovery.Record
		regs  []registry.Registration
		want  enrol.Decision
	}{
		"the smallest SSD of at least 200 GB boots, the spinning disks make the pool, the pool gives the address": {
			rules: []enrol.Rule{withPool(ssdBoot), anyQEMU},
			rec:   machine(1, disk("sda", "HDD-A", 4e12, true), disk("sdb", "SSD-BIG", 960e9, false), disk("sdc", "SSD-SMALL", 240e9, false), disk("sdd", "SSD-TINY", 120e9, false), disk("sde", "HDD-B", 4e12, true)),
			want: enrol.Decision{Machine: "52:54:00:00:00:01", Rule: "ssd-boot", Mode: enrol.ModeRegister, Name: "pve-01", BootDisk: "SSD-SMALL", Filesystem: "ext4",
				Pools: []string{"tank=mirror:HDD-A,HDD-B"}, Address: "10.0.0.100/24"},
		},
		"a machine whose only disk is too small falls to the next rule, by priority": {
			rec:  machine(2, disk("sda", "D2", 120e9, false)),
			want: enrol.Decision{Machine: "52:54:00:00:00:02", Rule: "qemu", Mode: enrol.ModeRegister, Name: "vm-srv-2", BootDisk: "D2", Filesystem: "ext4", Address: "dhcp"},
		},
		"a machine no rule takes says why, rule by rule": {
			rec: func() discovery.Record {
				r := machine(3, disk("sda", "D3", 120e9, false))
				r.DMI.Vendor = "Dell Inc."
				return r
			}(),
			want: enrol.Decision{Machine: "52:54:00:00:00:03", Reason: `no enrolment rule matches the machine: disk sda: size 120 GB below 200 GB of rule ssd-boot; DMI vendor "Dell Inc." does not match "qemu" of rule qemu`},
		},
		"a machine registered already is refused": {
			rec:  machine(4, disk("sda", "D4", 240e9, false)),
			regs: []registry.Registration{{Name: "old", MACs: []string{"52:54:00:00:00:04"}}},
			want: enrol.Decision{Machine: "52:54:00:00:00:04", Reason: "the machine is registered already as old"},
		},
		"a machine an installer consumed a registration of is refused, by serial": {
			rec:  machine(5, disk("sda", "D5", 240e9, false)),
			regs: []registry.Registration{{Name: "done", Consumed: &registry.ConsumeRecord{Serial: "SRV-5"}}},
			want: enrol.Decision{Machine: "52:54:00:00:00:05", Reason: "the machine is registered already as done"},
		},
		"a taken name takes the next number, a taken address the next address": {
			rec: machine(6, disk("sda", "D6", 240e9, false)),
			regs: []registry.Registration{{Name: "pve-01", MACs: []string{"52:54:00:99:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"},
				Network: &registry.Network{CIDR: "10.0.0.100/24", Gateway: "10.0.0.1", DNS: "10.0.0.1"}}},
			want: enrol.Decision{Machine: "52:54:00:00:00:06", Rule: "ssd-boot", Mode: enrol.ModeRegister, Name: "pve-02", BootDisk: "D6", Filesystem: "ext4", Address: "10.0.0.101/24"},
		},
		"a pool with no free address fails closed": {
			rec: machine(7, disk("sda", "D7", 240e9, false)),
			regs: []registry.Registration{
				{Name: "a", Network: &registry.Network{CIDR: "10.0.0.100/24"}},
				{Name: "b", Network: &registry.Network{CIDR: "10.0.0.101/24"}},
			},
			want: enrol.Decision{Machine: "52:54:00:00:00:07", Rule: "ssd-boot", Mode: enrol.ModeRegister, Name: "pve-01",
				Reason: "rule ssd-boot: no free address in the pool mgmt (no available IPs in pool 10.0.0.0/24 range 10.0.0.100-10.0.0.101)"},
		},
		"a name without a counter that is taken fails closed": {
			rec:  machine(8, disk("sda", "D8", 120e9, false)),
			regs: []registry.Registration{{Name: "vm-srv-8"}},
			want: enrol.Decision{Machine: "52:54:00:00:00:08", Rule: "qemu", Mode: enrol.ModeRegister, Reason: "rule qemu: the name is taken: vm-srv-8 is another machine's"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if tt.rules == nil {
				tt.rules = []enrol.Rule{ssdBoot, anyQEMU}
			}
			got, _ := enrol.Decide(state(t, tt.rules...), tt.rec, enrol.Inputs{Registrations: tt.regs, Now: now})
			got.Registration, got.Err = nil, nil
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Decide (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecideMakesTheRegistrationRegisterFromDiscoveredWould(t *testing.T) {
	rec := machine(1, disk("sda", "SSD", 240e9, false), disk("sdb", "H1", 4e12, true), disk("sdc", "H2", 4e12, true))
	rec.DMI.UUID = "6f1c2a3b-1111-2222-3333-444455556666"
	r := withPool(ssdBoot)
	r.Answer = &enrol.Answer{Keyboard: "de", Timezone: "Europe/Vienna", SSHKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBm9fCw2LT2Z0b3dsmBIf3P0BNqjzSNmRR0cEyOaOa6x rules"}}
	d, _ := enrol.Decide(state(t, r), rec, enrol.Inputs{Now: now})
	want := registry.Registration{Name: "pve-01", MACs: []string{"52:54:00:00:00:01"}, Serial: "SRV-1", UUID: "6f1c2a3b-1111-2222-3333-444455556666",
		BootDisk: answer.BootDisk{Kind: answer.BootDiskSerial, Value: "SSD"},
		Pools:    []registry.DataPool{{Name: "tank", Layout: registry.LayoutMirror, Disks: []string{"H1", "H2"}}},
		Network:  &registry.Network{CIDR: "10.0.0.100/24", Gateway: "10.0.0.1", DNS: "10.0.0.1", MAC: "52:54:00:00:00:01"},
		SSHKeys:  r.Answer.SSHKeys, Settings: &registry.Site{Keyboard: "de", Timezone: "Europe/Vienna"}, Created: now, FromDiscovery: true}
	if d.Err != nil {
		t.Fatal(d.Err)
	}
	if diff := cmp.Diff(want, *d.Registration); diff != "" {
		t.Errorf("registration (-want +got):\n%s", diff)
	}
}

func TestDecideCountsLimitsAndWidth(t *testing.T) {
	limited := enrol.Rule{Name: "two", Priority: 1, Limit: 2, Hostname: "n{n:01}", Match: enrol.Match{Vendor: "QEMU"}}
	s := state(t, limited)
	var names []string
	var errs []error
	for i := 1; i <= 3; i++ {
		d, next := enrol.Decide(s, machine(i, disk("sda", "D", 240e9, false)), enrol.Inputs{Now: now})
		s = next
		names, errs = append(names, d.Name), append(errs, d.Err)
	}
	if !cmp.Equal(names[:2], []string{"n1", "n2"}) || errs[0] != nil || errs[1] != nil {
		t.Errorf("the first two enrolments gave %v, %v; want n1, n2", names, errs)
	}
	if !errors.Is(errs[2], enrol.ErrLimit) {
		t.Errorf("the third enrolment of a rule of limit 2 = %v, want ErrLimit", errs[2])
	}
	if c := s.Counters["two"]; c.Enrolled != 2 || c.Next != 3 {
		t.Errorf("counter %+v, want 2 enrolled, next 3", c)
	}

	// A width of one digit takes 1 to 9; the tenth is past it.
	width := state(t, enrol.Rule{Name: "w", Priority: 1, Hostname: "n{n:01}", Match: enrol.Match{Vendor: "QEMU"}})
	width.Counters = map[string]enrol.Counter{"w": {Next: 10}}
	d, after := enrol.Decide(width, machine(1, disk("sda", "D", 240e9, false)), enrol.Inputs{Now: now})
	if !errors.Is(d.Err, enrol.ErrCounterPastWidth) || d.Registration != nil {
		t.Errorf("a counter past the width = %v, %v; want ErrCounterPastWidth and no registration", d.Err, d.Registration)
	}
	if !cmp.Equal(after, width) {
		t.Errorf("a refused enrolment changed the state: %+v", after)
	}
	// A collision at 9 takes 10, past the width: refused too.
	width.Counters = map[string]enrol.Counter{"w": {Next: 9}}
	d, _ = enrol.Decide(width, machine(1, disk("sda", "D", 240e9, false)), enrol.Inputs{Now: now, Registrations: []registry.Registration{{Name: "n9"}}})
	if !errors.Is(d.Err, enrol.ErrCounterPastWidth) {
		t.Errorf("a collision pushing the counter past the width = %v, want ErrCounterPastWidth", d.Err)
	}
}

func TestHeldNamesAndAddressesAreNotGivenTwiceUntilTheyExpire(t *testing.T) {
	r := ssdBoot
	r.Hostname = "node-{dmi.vendor}"
	s := state(t, r)
	_, s = enrol.Decide(s, machine(1, disk("sda", "D1", 240e9, false)), enrol.Inputs{Now: now})
	d, _ := enrol.Decide(s, machine(2, disk("sda", "D2", 240e9, false)), enrol.Inputs{Now: now})
	if !errors.Is(d.Err, enrol.ErrNameTaken) {
		t.Errorf("a name held by an enrolment under way = %v, want ErrNameTaken", d.Err)
	}
	d, _ = enrol.Decide(s, machine(2, disk("sda", "D2", 240e9, false)), enrol.Inputs{Now: now.Add(enrol.HoldTTL)})
	if d.Err != nil || d.Address != "10.0.0.100/24" {
		t.Errorf("after the hold expired: %v, address %s; want the name and first address free again", d.Err, d.Address)
	}
	released := s.Release("node-qemu")
	if len(released.Held) != 0 || released.Counters["ssd-boot"].Enrolled != 0 {
		t.Errorf("a failed enrolment's release left %+v", released)
	}
}

func TestPreviewGivesSuccessiveNumbersAndStoresNothing(t *testing.T) {
	s := state(t, ssdBoot, anyQEMU)
	recs := []discovery.Record{machine(1, disk("sda", "A", 240e9, false)), machine(2, disk("sda", "B", 240e9, false)), machine(3, disk("sda", "C", 240e9, false))}
	var got []string
	for _, d := range enrol.Preview(s, recs, enrol.Inputs{Now: now}) {
		got = append(got, d.Name+" "+d.Address+" "+d.Reason)
	}
	want := []string{"pve-01 10.0.0.100/24 ", "pve-02 10.0.0.101/24 ", "pve-03  rule ssd-boot: no free address in the pool mgmt (no available IPs in pool 10.0.0.0/24 range 10.0.0.100-10.0.0.101)"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("preview (-want +got):\n%s", d)
	}
	if len(s.Held) != 0 || len(s.Counters) != 0 {
		t.Errorf("Preview changed the state: %+v", s)
	}
}

func TestMismatch(t *testing.T) {
	rep := machine(1, disk("sda", "A", 120e9, false)).Report
	tests := map[string]struct {
		m    enrol.Match
		want string
	}{
		"a vendor glob matches without case": {enrol.Match{Vendor: "qe*"}, ""},
		"a product glob":                     {enrol.Match{Product: "Dell*"}, `DMI product "Standard PC" does not match "Dell*"`},
		"a serial glob":                      {enrol.Match{Serial: "SRV-?"}, ""},
		"NIC count":                          {enrol.Match{NICs: &enrol.Range{Min: 2}}, "1 NICs, fewer than 2"},
		"an OUI":                             {enrol.Match{MACPrefix: "00-25-90"}, "no MAC starts with 00:25:90 (MACs 52:54:00:00:00:01)"},
		"memory":                             {enrol.Match{Memory: &enrol.SizeRange{Min: 16e9}}, "memory 9 GB below 16 GB"},
		"CPUs":                               {enrol.Match{CPUs: &enrol.Range{Max: 2}}, "4 CPUs, more than 2"},
		"disk count":                         {enrol.Match{Disks: &enrol.DiskMatch{Count: &enrol.Range{Min: 2}}}, "1 disks match, fewer than 2"},
		"disk model":                         {enrol.Match{Disks: &enrol.DiskMatch{DiskFilter: enrol.DiskFilter{Model: "Samsung*"}}}, `disk sda: model "QEMU HARDDISK" does not match "Samsung*"`},
		"disk rotational":                    {enrol.Match{Disks: &enrol.DiskMatch{DiskFilter: enrol.DiskFilter{Rotational: yes()}}}, "disk sda: not rotational"},
		"disk transport":                     {enrol.Match{Disks: &enrol.DiskMatch{DiskFilter: enrol.DiskFilter{Transport: "nvme"}}}, "disk sda: transport sata, not nvme"},
		"disk size above":                    {enrol.Match{Disks: &enrol.DiskMatch{DiskFilter: enrol.DiskFilter{MaxSize: 100e9}}}, "disk sda: size 120 GB above 100 GB"},
		"the boot NIC's driver":              {enrol.Match{BootNIC: &enrol.NICMatch{Driver: "e1000*"}}, `boot NIC 52:54:00:00:00:01: driver "virtio_net" does not match "e1000*"`},
		"the boot NIC's OUI":                 {enrol.Match{BootNIC: &enrol.NICMatch{MACPrefix: "52:54:00"}}, ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tt.m.Mismatch(rep); got != tt.want {
				t.Errorf("Mismatch = %q, want %q", got, tt.want)
			}
		})
	}
	rep.BootMAC = ""
	if got := (enrol.Match{BootNIC: &enrol.NICMatch{Driver: "*"}}).Mismatch(rep); !strings.Contains(got, "does not say which NIC it booted from") {
		t.Errorf("a boot NIC match on a report without one = %q", got)
	}
}

// TestABMCRuleGivesTheReportedAddress: the registration's BMC is at the
// address the agent reported in-band, on the rule's port, else on the
// port the report gives for the rule's protocol, and names the rule's
// site secret.
func TestABMCRuleGivesTheReportedAddress(t *testing.T) {
	redfish8443 := discovery.Report{BMCAddress: "192.0.2.34", BMCKind: discovery.BMCRedfish, BMCPort: 8443}
	tests := map[string]struct {
		bmc      enrol.BMC
		reported discovery.Report
		want     registry.BMC
	}{
		"IPMI on its own port": {enrol.BMC{Scheme: "ipmi", User: "admin", Secret: "bmc-rack1"}, discovery.Report{BMCAddress: "192.0.2.33"},
			registry.BMC{URL: "ipmi://192.0.2.33", User: "admin", Secret: "bmc-rack1"}},
		"Redfish on the rule's port": {enrol.BMC{Scheme: "redfish", User: "root", Secret: "rf", Port: 8443, Address: "report"}, discovery.Report{BMCAddress: "192.0.2.34"},
			registry.BMC{URL: "redfish://192.0.2.34:8443", User: "root", Secret: "rf"}},
		"IPv6 with a port": {enrol.BMC{Scheme: "redfish", User: "root", Secret: "rf", Port: 443}, discovery.Report{BMCAddress: "2001:db8::34"},
			registry.BMC{URL: "redfish://[2001:db8::34]:443", User: "root", Secret: "rf"}},
		"Redfish on the host interface's port": {enrol.BMC{Scheme: "redfish", User: "root", Secret: "rf"}, redfish8443,
			registry.BMC{URL: "redfish://192.0.2.34:8443", User: "root", Secret: "rf"}},
		"the rule's port over the reported one": {enrol.BMC{Scheme: "redfish", User: "root", Secret: "rf", Port: 443}, redfish8443,
			registry.BMC{URL: "redfish://192.0.2.34:443", User: "root", Secret: "rf"}},
		"IPMI at a Redfish service's address, not its port": {enrol.BMC{Scheme: "ipmi", User: "admin", Secret: "bmc"}, redfish8443,
			registry.BMC{URL: "ipmi://192.0.2.34", User: "admin", Secret: "bmc"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := anyQEMU
			r.BMC = &tt.bmc
			rec := machine(3, disk("sda", "S", 240e9, false))
			rec.BMCAddress, rec.BMCKind, rec.BMCPort = tt.reported.BMCAddress, tt.reported.BMCKind, tt.reported.BMCPort
			d, _ := enrol.Decide(state(t, r), rec, enrol.Inputs{Now: now})
			if d.Err != nil {
				t.Fatal(d.Err)
			}
			if diff := cmp.Diff(&tt.want, d.Registration.BMC); diff != "" {
				t.Errorf("BMC (-want +got):\n%s", diff)
			}
			if d.BMC != tt.want.URL {
				t.Errorf("the decision's BMC = %q, want %q (what rule test shows)", d.BMC, tt.want.URL)
			}
		})
	}
}

// TestABMCRuleRefusesAReportWithoutAnAddress: a BMC rule does not take
// a machine whose report has no BMC address, and rule test's reason
// says what the firmware named instead.
func TestABMCRuleRefusesAReportWithoutAnAddress(t *testing.T) {
	tests := map[string]struct {
		ipmi string
		want string
	}{
		"no BMC named":    {"", "its report has no BMC address (its firmware names no Redfish host interface with a routable service address and no IPMI BMC) of rule"},
		"an IPMI BMC":     {"kcs", "its report has no BMC address (its firmware names an IPMI BMC on kcs, which gave the agent no LAN address through /dev/ipmi0; the agent's log says why) of rule"},
		"an unknown IPMI": {"unknown", "an IPMI BMC on unknown"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := anyQEMU
			r.BMC = &enrol.BMC{Scheme: "ipmi", User: "admin", Secret: "bmc"}
			rec := machine(3, disk("sda", "S", 240e9, false))
			rec.BMCIPMI = tt.ipmi
			d, _ := enrol.Decide(state(t, r), rec, enrol.Inputs{Now: now})
			if !errors.Is(d.Err, enrol.ErrNoRule) || !strings.Contains(d.Reason, tt.want) {
				t.Errorf("Decide = %v (%q), want ErrNoRule saying %q", d.Err, d.Reason, tt.want)
			}
		})
	}
}
