package pxe

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/registry"
)

// TestHardwareBootMethod: a machine of a hardware list takes
// boot_method (network, the default, or virtual-media), and
// virtual-media is refused, naming the file and line and why, for a
// machine without a BMC or with an IPMI one.
func TestHardwareBootMethod(t *testing.T) {
	const rf = "    bmc:\n      url: redfish://10.0.0.5\n      user: root\n      password_env: PW\n"
	tests := map[string]struct {
		in   string
		want registry.BootMethod
		err  string
	}{
		"virtual media behind Redfish": {in: "machines:\n  - macs: [52:54:00:00:00:01]\n    boot_method: virtual-media\n" + rf, want: registry.BootVirtualMedia},
		"network":                      {in: "machines:\n  - macs: [52:54:00:00:00:01]\n    boot_method: network\n", want: registry.BootNetwork},
		"none said":                    {in: "machines:\n  - macs: [52:54:00:00:00:01]\n", want: ""},
		"an unknown method":            {in: "machines:\n  - macs: [52:54:00:00:00:01]\n    boot_method: usb\n", err: `hw.yaml:2: invalid hardware list: boot_method: invalid boot method "usb": want "network" or "virtual-media"`},
		"virtual media without a BMC": {in: "machines:\n  - macs: [52:54:00:00:00:01]\n    boot_method: virtual-media\n",
			err: "hw.yaml:2: invalid hardware list: boot_method virtual-media needs a Redfish BMC (bmc.url redfish://…), which lends the machine the installer's medium; this machine has no bmc"},
		"virtual media behind IPMI": {in: "machines:\n  - macs: [52:54:00:00:00:01]\n    boot_method: virtual-media\n    bmc:\n      url: ipmi://10.0.0.5\n      user: admin\n      password_env: PW\n",
			err: "hw.yaml:2: invalid hardware list: boot_method virtual-media needs a Redfish BMC (bmc.url redfish://…), which lends the machine the installer's medium; IPMI has no virtual media"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			hs, err := ParseHardware("hw.yaml", []byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrInvalidHardware) {
					t.Fatalf("err %v\nwant ErrInvalidHardware with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(tc.want), hs[0].BootMethod); diff != "" {
				t.Errorf("boot method (-want +got):\n%s", diff)
			}
		})
	}
}
