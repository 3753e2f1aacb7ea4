package pxe

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/client"
)

// TestBootDetailSaysWhatBootsOnce: the started step says whether the
// machine boots PXE or the installer's medium on its BMC's virtual CD.
func TestBootDetailSaysWhatBootsOnce(t *testing.T) {
	tests := map[string]struct {
		reply client.BootReply
		want  string
	}{
		"PXE from an older daemon": {client.BootReply{Protocol: "ipmi", Mode: "legacy"}, "next boot PXE once (legacy), power on via ipmi"},
		"PXE, cycled":              {client.BootReply{Protocol: "redfish", Mode: "uefi", Cycled: true, Device: "pxe"}, "next boot PXE once (uefi), power cycle via redfish"},
		"virtual CD":               {client.BootReply{Protocol: "redfish", Mode: "uefi", Device: "cd"}, "next boot the virtual CD once (uefi), power on via redfish"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, bootDetail(tc.reply)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
