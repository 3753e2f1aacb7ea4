package pxe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/internal/badinput"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

// TestBadMACsPlanNoNode runs the bad MAC table through every way the
// provider takes a machine's MAC: the hardware file's macs and
// management_mac, and a pool's hardware in platform.yaml. None plans a
// node.
func TestBadMACsPlanNoNode(t *testing.T) {
	entries := map[string]func(in *providers.DirectInput, mac string){
		"the hardware file's macs": func(in *providers.DirectInput, mac string) {
			writeHardware(t, in, fmt.Sprintf("machines:\n  - macs: [%q]\n    boot_disk: sda\n", mac))
		},
		"the hardware file's management_mac": func(in *providers.DirectInput, mac string) {
			writeHardware(t, in, fmt.Sprintf("machines:\n  - macs: [\"52:54:00:00:00:01\"]\n    management_mac: %q\n    boot_disk: sda\n", mac))
		},
		"a pool's hardware in platform.yaml": func(in *providers.DirectInput, mac string) {
			c := in.Pools["control"]
			c.Hardware = []nodes.Machine{{MACs: []string{mac}, BootDisk: "sda"}}
			in.Pools["control"] = c
		},
	}
	for _, bad := range badinput.MACs() {
		for entry, set := range entries {
			t.Run(bad.Name+"/"+entry, func(t *testing.T) {
				in := input(t, t.TempDir(), 1)
				set(&in, bad.Value)
				p, err := (&Provider{}).Plan(context.Background(), in)
				if err == nil {
					t.Fatalf("Plan with MAC %s = %+v, want it refused", bad.Value, p.Summary())
				}
				if !errors.Is(err, ErrInvalidHardware) || !strings.Contains(err.Error(), bad.Want) {
					t.Errorf("error %v, want ErrInvalidHardware saying %q", err, bad.Want)
				}
			})
		}
	}
}

func writeHardware(t *testing.T, in *providers.DirectInput, content string) {
	t.Helper()
	in.HardwareFile = filepath.Join(t.TempDir(), "hardware.yaml")
	if err := os.WriteFile(in.HardwareFile, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
