package agent

import (
	"testing"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// TestBootMAC: the NIC the machine booted from is BOOTIF's (as iPXE's
// and pxelinux's ${netX/mac} write it: 01-, then the MAC with dashes),
// else the NIC that took the DHCP lease; a MAC that is none of the
// machine's NICs is not reported.
func TestBootMAC(t *testing.T) {
	nics := []discovery.NIC{{MAC: "52:54:00:00:00:01"}, {MAC: "52:54:00:00:00:02"}}
	tests := map[string]struct {
		cmdline, leased, want string
	}{
		"BOOTIF names the second NIC":       {"quiet BOOTIF=01-52-54-00-00-00-02 console=ttyS0", "52:54:00:00:00:01", "52:54:00:00:00:02"},
		"BOOTIF in upper case with colons":  {"BOOTIF=01:52:54:00:00:00:02", "", "52:54:00:00:00:02"},
		"BOOTIF without its type":           {"BOOTIF=52-54-00-00-00-01", "", "52:54:00:00:00:01"},
		"no BOOTIF: the leased NIC":         {"quiet", "52:54:00:00:00:02", "52:54:00:00:00:02"},
		"BOOTIF of no NIC: the leased one":  {"BOOTIF=01-aa-bb-cc-dd-ee-ff", "52:54:00:00:00:01", "52:54:00:00:00:01"},
		"neither: none":                     {"BOOTIF=garbage", "", ""},
		"a leased NIC not among them: none": {"", "52:54:00:00:00:09", ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := bootMAC(tt.cmdline, tt.leased, nics); got != tt.want {
				t.Errorf("bootMAC = %q, want %q", got, tt.want)
			}
		})
	}
}
