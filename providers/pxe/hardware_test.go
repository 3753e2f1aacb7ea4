package pxe

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/nodes"
)

func TestParseHardware(t *testing.T) {
	good := `# two machines
machines:
  - macs: ["52:54:00:00:00:01"]
    boot_disk: 25414A800205
    data_pools: ["tank=mirror:S1,S2"]
  - serial: CZ2D1A0BC3
    uuid: 0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0
    pool: control
`
	hs, err := ParseHardware("hw.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	want := []Hardware{
		{Machine: nodes.Machine{MACs: []string{"52:54:00:00:00:01"}, BootDisk: "25414A800205", DataPools: []string{"tank=mirror:S1,S2"}}, Where: "hw.yaml:3"},
		{Machine: nodes.Machine{Serial: "CZ2D1A0BC3", UUID: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", Pool: "control"}, Where: "hw.yaml:6"},
	}
	if diff := cmp.Diff(want, hs); diff != "" {
		t.Errorf("ParseHardware (-want +got):\n%s", diff)
	}
	js, err := ParseHardware("hw.json", []byte(`{"machines": [{"macs": ["AA-BB-CC-DD-EE-01"], "boot_disk": "sda"}]}`))
	if err != nil || js[0].MACs[0] != "aa:bb:cc:dd:ee:01" {
		t.Errorf("JSON: %v %v", js, err)
	}
}

func TestParseHardwareRefusesBadInputWithFileAndLine(t *testing.T) {
	tests := map[string]struct {
		in   string
		want string
	}{
		"a tab in YAML":             {"machines:\n  - macs: [52:54:00:00:00:01]\n\tboot_disk: sda\n", "hw.yaml:3: invalid hardware list: not YAML or JSON"},
		"a list at the top":         {"- macs: [52:54:00:00:00:01]\n", "hw.yaml:1: invalid hardware list: want a mapping with the key machines"},
		"an unknown top key":        {"machine:\n  - macs: []\n", `hw.yaml:1: invalid hardware list: unknown key "machine" (want machines)`},
		"machines not a list":       {"machines: 3\n", "hw.yaml:1: invalid hardware list: machines: want a list of machines"},
		"a misspelt key":            {"machines:\n  - macs: [52:54:00:00:00:01]\n    bootdisk: sda\n", `hw.yaml:3: invalid hardware list: unknown key "bootdisk" (known: pool, macs, serial, uuid, boot_disk, data_pools, management_mac, bmc, boot_method, media_answer)`},
		"macs not a list":           {"machines:\n  - macs: 52:54:00:00:00:01\n", "hw.yaml:2: invalid hardware list: macs: want a list of strings"},
		"a bad MAC":                 {"machines:\n  - macs: [52:54:00:00:00]\n", `hw.yaml:2: invalid hardware list: macs: invalid MAC address: "52:54:00:00:00"`},
		"a partition as disk":       {"machines:\n  - macs: [52:54:00:00:00:01]\n    boot_disk: sda1\n", `hw.yaml:2: invalid hardware list: boot_disk: invalid boot disk "sda1"`},
		"a bad data pool":           {"machines:\n  - macs: [52:54:00:00:00:01]\n    data_pools: [tank]\n", "hw.yaml:2: invalid hardware list: data_pools:"},
		"a machine pinning nothing": {"machines:\n  - boot_disk: sda\n", "hw.yaml:2: invalid hardware list: the machine pins nothing: give macs, serial or uuid"},
		"a placeholder serial":      {"machines:\n  - serial: To Be Filled By O.E.M.\n", "hw.yaml:2: invalid hardware list: serial \"To Be Filled By O.E.M.\" is a firmware placeholder"},
		"a MAC given twice":         {"machines:\n  - macs: [52:54:00:00:00:01]\n  - macs: [52-54-00-00-00-01]\n", "hw.yaml:3: invalid hardware list: mac 52:54:00:00:00:01 is also given to the machine at hw.yaml:2"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ParseHardware("hw.yaml", []byte(tc.in))
			if !errors.Is(err, ErrInvalidHardware) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q wrapping ErrInvalidHardware", err, tc.want)
			}
		})
	}
}

func TestMachineIDIsAValidServerID(t *testing.T) {
	p := &Provider{}
	for _, m := range []nodes.Machine{{MACs: []string{"52:54:00:00:00:01"}}, {Serial: "CZ2D1A0BC3"}, {UUID: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}} {
		if err := p.ValidateServerID(MachineID(m)); err != nil {
			t.Errorf("MachineID(%+v) = %q: %v", m, MachineID(m), err)
		}
	}
	if err := p.ValidateServerID("4711"); err == nil {
		t.Error("a cloud server id passes")
	}
}

// FuzzParseHardware: any input is refused with ErrInvalidHardware or
// gives machines that each pin something and make a valid registration.
func FuzzParseHardware(f *testing.F) {
	f.Add([]byte(hwFile))
	f.Add([]byte(`{"machines": [{"macs": ["AA-BB-CC-DD-EE-01"], "boot_disk": "sda"}]}`))
	f.Add([]byte("machines:\n  - serial: &a X1\n  - serial: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		hs, err := ParseHardware("fuzz.yaml", data)
		if err != nil {
			if !errors.Is(err, ErrInvalidHardware) {
				t.Fatalf("error %v does not wrap ErrInvalidHardware", err)
			}
			return
		}
		for _, h := range hs {
			if MachineID(h.Machine) == "" {
				t.Fatalf("machine at %s pins nothing", h.Where)
			}
			if _, err := registration("node", h.Machine); err != nil {
				t.Fatalf("machine at %s: %v", h.Where, err)
			}
		}
	})
}

func TestHardwareBMC(t *testing.T) {
	const head = "machines:\n  - macs: [\"52:54:00:00:00:01\"]\n    bmc:\n"
	good := head + "      url: ipmi://10.0.0.51:623\n      user: admin\n      password_env: RACK1_BMC\n      cipher_suite: 17\n      boot_mode: legacy\n"
	hs, err := ParseHardware("hw.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	b := hs[0].BMC
	if b == nil || b.URL != "ipmi://10.0.0.51:623" || b.PasswordEnv != "RACK1_BMC" {
		t.Fatalf("bmc %+v", b)
	}
	r, pw, err := b.Registration(func(k string) string { return map[string]string{"RACK1_BMC": "s3cret"}[k] })
	if err != nil || pw != "s3cret" || r.CipherSuite != 17 || r.BootMode != "legacy" || r.User != "admin" {
		t.Errorf("registration %+v %q %v", r, pw, err)
	}
	if _, _, err := b.Registration(func(string) string { return "" }); !errors.Is(err, ErrInvalidHardware) || !strings.Contains(err.Error(), "RACK1_BMC is unset") {
		t.Errorf("unset variable: %v", err)
	}
	tests := []struct{ yaml, want string }{
		{head + "      url: ipmi://bmc\n      user: admin\n      password: hunter2\n", "hw.yaml:6: invalid hardware list: bmc: a password is never written"},
		{head + "      url: ipmi://bmc\n      user: admin\n      password_env: X\n      cipher_suite: 0\n", "no authentication"},
		{head + "      url: ftp://bmc\n      user: admin\n      password_env: X\n", `scheme "ftp"`},
		{head + "      url: ipmi://bmc\n      user: admin\n", "password_env \"\""},
		{head + "      url: ipmi://bmc\n      user: admin\n      password_env: X\n      colour: red\n", `unknown key "colour"`},
		{"machines:\n  - macs: [\"52:54:00:00:00:01\"]\n    bmc: ipmi://bmc\n", "bmc: want a mapping"},
	}
	for _, tc := range tests {
		_, err := ParseHardware("hw.yaml", []byte(tc.yaml))
		if !errors.Is(err, ErrInvalidHardware) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want %q", tc.yaml, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error quotes the password: %v", err)
		}
	}
}
