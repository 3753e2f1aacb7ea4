package enrol_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func TestDecodeReadsYAMLAndJSONStrictly(t *testing.T) {
	want := []enrol.Rule{{
		Name: "ssd-boot", Priority: 10, Mode: enrol.ModeInstall, Limit: 20, Hostname: "pve-{n:02}",
		Match: enrol.Match{Vendor: "Dell*", Disks: &enrol.DiskMatch{DiskFilter: enrol.DiskFilter{MinSize: 200e9, Rotational: no()}}},
		Disks: enrol.Disks{Boot: &enrol.BootDisk{DiskFilter: enrol.DiskFilter{MinSize: 200e9, Rotational: no()}},
			Pools: []enrol.Pool{{Name: "tank", Layout: registry.LayoutMirror, Disks: enrol.DiskFilter{Rotational: yes()}}}},
		Address: &enrol.Address{Pool: "mgmt", CIDR: "10.0.0.0/24", Range: "10.0.0.100-10.0.0.199", Gateway: "10.0.0.1", DNS: "10.0.0.1"},
	}}
	yamlDoc := `rules:
- name: ssd-boot
  priority: 10
  mode: install
  limit: 20
  hostname: pve-{n:02}
  match:
    vendor: Dell*
    disks: {min_size: 200GB, rotational: false}
  disks:
    boot: {min_size: 200GB, rotational: false}
    pools: [{name: tank, layout: mirror, disks: {rotational: true}}]
  address: {pool: mgmt, cidr: 10.0.0.0/24, range: 10.0.0.100-10.0.0.199, gateway: 10.0.0.1, dns: 10.0.0.1}
`
	jsonOne := `{"name": "ssd-boot", "priority": 10, "mode": "install", "limit": 20, "hostname": "pve-{n:02}",
 "match": {"vendor": "Dell*", "disks": {"min_size": "200GB", "rotational": false}},
 "disks": {"boot": {"min_size": 200000000000, "rotational": false}, "pools": [{"name": "tank", "layout": "mirror", "disks": {"rotational": true}}]},
 "address": {"pool": "mgmt", "cidr": "10.0.0.0/24", "range": "10.0.0.100-10.0.0.199", "gateway": "10.0.0.1", "dns": "10.0.0.1"}}`
	for name, doc := range map[string]string{"a YAML rules file": yamlDoc, "one JSON rule": jsonOne, "a JSON list": "[" + jsonOne + "]"} {
		t.Run(name, func(t *testing.T) {
			got, err := enrol.Decode(strings.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("decoded (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	tests := map[string]struct{ doc, want string }{
		"an unknown key":          {"name: a\nhostname: a-{n}\nmatch: {vendor: x}\nbootdisk: sda\n", `unknown field "bootdisk"`},
		"an unknown match key":    {"name: a\nmatch: {colour: red}\n", `unknown field "colour"`},
		"a key given twice":       {"name: a\nname: b\n", "already defined"},
		"two documents":           {"name: a\n---\nname: b\n", "more than one YAML document"},
		"a size without a number": {"name: a\nmatch: {disks: {min_size: big}}\n", `size "big": want a number with a unit`},
		"a BMC password in the rule": {"name: a\nbmc: {scheme: ipmi, user: root, secret: bmc, password: hunter2}\n",
			"bmc.password: a rule never holds credentials; keep them in a site secret (node-provisioner secret set NAME) and name it in bmc.secret"},
		"BMC credentials by another key": {`{"rules": [{"name": "a", "bmc": {"scheme": "redfish", "user": "root", "secret": "bmc", "pass": "x"}}]}`, "bmc.pass: a rule never holds credentials"},
		"a BMC token in the rule":        {"- name: a\n  bmc: {scheme: redfish, user: root, secret: bmc, token: abc}\n", "bmc.token: a rule never holds credentials"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := enrol.Decode(strings.NewReader(tt.doc))
			if !errors.Is(err, enrol.ErrInvalidRule) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decode = %v, want ErrInvalidRule saying %q", err, tt.want)
			}
		})
	}
}

// valid returns a rule Check accepts; edit changes it.
func valid(edit func(*enrol.Rule)) enrol.Rule {
	r := enrol.Rule{Name: "r", Priority: 1, Hostname: "pve-{n:02}", Match: enrol.Match{Vendor: "QEMU"}}
	if edit != nil {
		edit(&r)
	}
	return r
}

func TestCheckRefusesARuleAtAdd(t *testing.T) {
	tests := map[string]struct {
		edit func(*enrol.Rule)
		want string
	}{
		"an empty match":                    {func(r *enrol.Rule) { r.Match = enrol.Match{} }, "match: empty"},
		"a bad rule name":                   {func(r *enrol.Rule) { r.Name = "Big_Rule" }, `name "Big_Rule"`},
		"an unknown mode":                   {func(r *enrol.Rule) { r.Mode = "auto" }, `mode "auto": want register or install`},
		"an unknown template field":         {func(r *enrol.Rule) { r.Hostname = "pve-{rack}" }, "unknown field {rack}"},
		"a template in upper case":          {func(r *enrol.Rule) { r.Hostname = "PVE-{n}" }, `makes "PVE-1"`},
		"a template with an underscore":     {func(r *enrol.Rule) { r.Hostname = "pve_{n:02}" }, `makes "pve_99"`},
		"a template of digits only":         {func(r *enrol.Rule) { r.Hostname = "{n:03}" }, `makes "999"`},
		"a template too long for a label":   {func(r *enrol.Rule) { r.Hostname = strings.Repeat("a", 62) + "{n:02}" }, "makes"},
		"a template with a bad width":       {func(r *enrol.Rule) { r.Hostname = "pve-{n:2}" }, `width "2" of {n}`},
		"an unclosed brace":                 {func(r *enrol.Rule) { r.Hostname = "pve-{n" }, "a '{' without its '}'"},
		"a keyboard the installer refuses":  {func(r *enrol.Rule) { r.Answer = &enrol.Answer{Keyboard: "klingon"} }, "klingon"},
		"a timezone the installer refuses":  {func(r *enrol.Rule) { r.Answer = &enrol.Answer{Timezone: "Mars/Olympus"} }, "Mars/Olympus"},
		"an installer version before 8.2":   {func(r *enrol.Rule) { r.Answer = &enrol.Answer{Version: "7.4"} }, `answer version "7.4"`},
		"a bad transport":                   {func(r *enrol.Rule) { r.Match.Disks = &enrol.DiskMatch{DiskFilter: enrol.DiskFilter{Transport: "usb"}} }, `transport "usb": want nvme, sata or sas`},
		"a bad MAC prefix":                  {func(r *enrol.Rule) { r.Match.MACPrefix = "52:54:0" }, `mac_prefix "52:54:0"`},
		"a pool layout unknown":             {func(r *enrol.Rule) { r.Disks.Pools = []enrol.Pool{{Name: "tank", Layout: "raid5"}} }, `invalid pool layout "raid5"`},
		"a reserved pool name":              {func(r *enrol.Rule) { r.Disks.Pools = []enrol.Pool{{Name: "mirror1", Layout: "mirror"}} }, "zpool reserves"},
		"an address pool without a gateway": {func(r *enrol.Rule) { r.Address = &enrol.Address{Pool: "m", CIDR: "10.0.0.0/24", DNS: "10.0.0.1"} }, "want pool, cidr, gateway and dns"},
		"an address pool of a bad CIDR": {func(r *enrol.Rule) {
			r.Address = &enrol.Address{Pool: "m", CIDR: "10.0.0.1/24", Gateway: "10.0.0.1", DNS: "10.0.0.1"}
		}, "address:"},
		"a BMC of an unknown scheme":  {func(r *enrol.Rule) { r.BMC = &enrol.BMC{Scheme: "ilo", User: "root", Secret: "bmc"} }, `bmc scheme "ilo"`},
		"a BMC without a secret name": {func(r *enrol.Rule) { r.BMC = &enrol.BMC{Scheme: "ipmi", User: "root"} }, `bmc secret ""`},
		"a BMC port out of range":     {func(r *enrol.Rule) { r.BMC = &enrol.BMC{Scheme: "redfish", User: "root", Secret: "bmc", Port: 70000} }, "bmc port 70000: want 1 to 65535"},
		"a BMC address from elsewhere": {func(r *enrol.Rule) {
			r.BMC = &enrol.BMC{Scheme: "redfish", User: "root", Secret: "bmc", Address: "dhcp"}
		}, `bmc address "dhcp": want report`},
		"a negative limit": {func(r *enrol.Rule) { r.Limit = -1 }, "limit -1"},
		"a zfs raid level the one boot disk cannot take": {func(r *enrol.Rule) {
			r.Answer = &enrol.Answer{Filesystem: &registry.Filesystem{Type: answer.FilesystemZFS, Raid: answer.Raid1}}
		}, "zfs raid1 needs at least 2 disks, and the boot disk is one disk"},
		"a filesystem the installer does not know": {func(r *enrol.Rule) { r.Answer = &enrol.Answer{Filesystem: &registry.Filesystem{Type: "ntfs"}} }, `filesystem: type "ntfs"`},
		"btrfs compression for an installer before 8.3": {func(r *enrol.Rule) {
			r.Answer = &enrol.Answer{Version: "8.2", Filesystem: &registry.Filesystem{Type: answer.FilesystemBtrfs, Compress: "zstd"}}
		}, "btrfs.compress"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := valid(tt.edit).Check(registry.Site{})
			if !errors.Is(err, enrol.ErrInvalidRule) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check = %v, want ErrInvalidRule saying %q", err, tt.want)
			}
		})
	}
	if err := valid(nil).Check(registry.Site{}); err != nil {
		t.Errorf("Check of a valid rule = %v", err)
	}
}

func TestCheckSetRefusesTiesAndOneTemplateTwice(t *testing.T) {
	a := valid(func(r *enrol.Rule) { r.Name = "a" })
	tests := map[string]struct {
		b    enrol.Rule
		want error
	}{
		"a priority tie": {valid(func(r *enrol.Rule) { r.Name, r.Hostname = "b", "node-{n}" }), enrol.ErrPriorityTaken},
		"one template":   {valid(func(r *enrol.Rule) { r.Name, r.Priority = "b", 2 }), enrol.ErrInvalidRule},
		"one name twice": {valid(func(r *enrol.Rule) { r.Name, r.Priority, r.Hostname = "a", 2, "node-{n}" }), enrol.ErrInvalidRule},
		"one pool unalike": {valid(func(r *enrol.Rule) {
			r.Name, r.Priority, r.Hostname = "b", 2, "node-{n}"
			r.Address = &enrol.Address{Pool: "m", CIDR: "10.1.0.0/24"}
		}), enrol.ErrInvalidRule},
	}
	a.Address = &enrol.Address{Pool: "m", CIDR: "10.0.0.0/24"}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := (enrol.State{}).Apply([]enrol.Rule{a, tt.b}); !errors.Is(err, tt.want) {
				t.Errorf("Apply = %v, want %v", err, tt.want)
			}
		})
	}
	s, _ := enrol.State{}.Add(a, false)
	if _, err := s.Add(a, false); !errors.Is(err, enrol.ErrExists) {
		t.Errorf("Add of a name again = %v, want ErrExists", err)
	}
	if _, err := s.Add(a, true); err != nil {
		t.Errorf("Add with replace = %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]enrol.Size{"200GB": 200e9, "1.5TB": 1.5e12, "512GiB": 512 << 30, "1000": 1000, " 2 TB ": 2e12} {
		if got, err := enrol.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GB", "-1GB", "ten"} {
		if _, err := enrol.ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) took it", in)
		}
	}
	if got := enrol.Size(120e9).String(); got != "120 GB" {
		t.Errorf("String = %q, want 120 GB", got)
	}
}
