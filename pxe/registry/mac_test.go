package registry

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/badinput"
)

// TestBadMACsAreRefusedByEveryRegistryEntry runs the bad MAC table
// through every way a MAC enters a registration in this package: the
// rule itself, a registration file's macs and network.mac, and Prepare,
// which every store's Register starts with.
func TestBadMACsAreRefusedByEveryRegistryEntry(t *testing.T) {
	entries := map[string]func(mac string) error{
		"NormalizeMAC": func(mac string) error { _, err := NormalizeMAC(mac); return err },
		"a registration file's macs": func(mac string) error {
			_, err := DecodeRegistration(fmt.Appendf(nil, `{"name":"a3","macs":[%q]}`, mac), "a3")
			return err
		},
		"a registration file's network.mac": func(mac string) error {
			_, err := DecodeRegistration(fmt.Appendf(nil, `{"name":"a3","macs":["52:54:00:12:34:56"],"network":{"cidr":"10.0.0.5/24","gateway":"10.0.0.1","dns":"10.0.0.1","mac":%q}}`, mac), "a3")
			return err
		},
		"Prepare": func(mac string) error {
			_, err := Prepare(Registration{Name: "a3", MACs: []string{mac}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}})
			return err
		},
	}
	for _, bad := range badinput.MACs() {
		for entry, call := range entries {
			t.Run(bad.Name+"/"+entry, func(t *testing.T) {
				err := call(bad.Value)
				if !errors.Is(err, ErrInvalidMAC) || !errors.Is(err, ErrInvalidRegistration) || !strings.Contains(err.Error(), bad.Want) {
					t.Errorf("%s(%q) = %v; want ErrInvalidMAC saying %q", entry, bad.Value, err, bad.Want)
				}
			})
		}
	}
}

// TestMACRuleKeepsMachinesOwnAddresses: locally administered and
// ordinary vendor addresses are a machine's own.
func TestMACRuleKeepsMachinesOwnAddresses(t *testing.T) {
	for _, mac := range []string{"52:54:00:12:34:56", "02:00:00:00:00:01", "fe:ff:ff:ff:ff:ff", "00:00:00:00:00:01"} {
		if got, err := NormalizeMAC(mac); err != nil || got != mac {
			t.Errorf("NormalizeMAC(%q) = %q, %v; want it kept", mac, got, err)
		}
	}
}
