package power_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/power/powertest"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// partitionMedia names the CD and the removable medium of each style.
var partitionMedia = map[string]struct {
	style         fakeredfish.MediaStyle
	cd, removable string
}{
	"under the Manager": {fakeredfish.MediaUnderManager, "CD", "RemovableDisk"},
	"under the System":  {fakeredfish.MediaUnderSystem, "CD1", "USBStick1"},
}

// TestBootFromVirtualMediaPartition: with the media answer partition,
// the boot arms the node's CD and its answer image (each its own URL),
// inserts the CD and the answer image into the removable medium, boots
// once from the CD and powers on, in both vendor styles; Eject takes
// both out and kills both URLs.
func TestBootFromVirtualMediaPartition(t *testing.T) {
	for name, tc := range partitionMedia {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			fake, req, m, h := vmLab(t, tc.style)
			req.Site = registry.Site{MediaAnswer: registry.MediaAnswerPartition}
			res, err := power.Boot(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Device != power.DeviceCD {
				t.Errorf("boot device %q; want the CD", res.Device)
			}
			if diff := cmp.Diff([]string{"boot cd", "power 1"}, h.told()); diff != "" {
				t.Errorf("the machine was told (-want +got):\n%s", diff)
			}
			media := inserted(fake)
			if img := media[tc.cd]; !m.Ours(img) || !strings.HasSuffix(img, "/n1.iso") {
				t.Errorf("medium %s holds %q; want n1's CD", tc.cd, img)
			}
			if img := media[tc.removable]; !m.Ours(img) || !strings.HasSuffix(img, "/n1.img") {
				t.Errorf("medium %s holds %q; want n1's answer image", tc.removable, img)
			}
			for _, id := range []string{tc.cd, tc.removable} {
				if _, err := fake.WaitMedium(ctx, id); err != nil {
					t.Errorf("the BMC could not fetch medium %s: %v", id, err)
				}
			}
			if err := power.Eject(ctx, req); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]string{tc.cd: "", tc.removable: ""}, inserted(fake)); diff != "" {
				t.Errorf("after Eject (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"arm n1", "arm-answer n1", "disarm n1", "disarm n1", "disarm n1"}, m.Calls()); diff != "" {
				t.Errorf("media calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBootFromVirtualMediaPartitionRefusals: a BMC with only a CD is
// refused before anything is armed, inserted or powered, naming the BMC
// and the step; an answer image the BMC will not take ejects the CD
// already inserted and kills both URLs, and the machine is not booted.
func TestBootFromVirtualMediaPartitionRefusals(t *testing.T) {
	ctx := t.Context()
	for name, tc := range partitionMedia {
		t.Run(name, func(t *testing.T) {
			t.Run("a BMC with only a CD", func(t *testing.T) {
				fake, req, m, h := vmLabOf(t, fakeredfish.MediaConfig{Style: tc.style, CDOnly: true})
				req.Site = registry.Site{MediaAnswer: registry.MediaAnswerPartition}
				_, err := power.Boot(ctx, req)
				if !errors.Is(err, bmc.ErrNoVirtualMedia) {
					t.Fatalf("boot: %v; want ErrNoVirtualMedia", err)
				}
				for _, want := range []string{"n1", "BMC redfish://", "read virtual media", "second, removable medium", "only " + tc.cd + " (CD"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%v; want it to say %q", err, want)
					}
				}
				if calls, told := m.Calls(), h.told(); len(calls)+len(told) > 0 {
					t.Errorf("media calls %q, the machine told %q; want nothing", calls, told)
				}
				if diff := cmp.Diff(map[string]string{tc.cd: ""}, inserted(fake)); diff != "" {
					t.Errorf("media (-want +got):\n%s", diff)
				}
			})
			t.Run("an answer image the BMC will not take", func(t *testing.T) {
				fake, req, m, h := vmLab(t, tc.style)
				req.Site = registry.Site{MediaAnswer: registry.MediaAnswerPartition}
				other := powertest.NewMedia(t)
				foreign, _ := other.Arm(ctx, "theirs", false)
				if _, err := openVM(t, req).InsertMedia(ctx, foreign, bmc.InsertOptions{Removable: true}); err != nil {
					t.Fatal(err)
				}
				_, err := power.Boot(ctx, req)
				if !errors.Is(err, bmc.ErrMediumInUse) || !strings.Contains(err.Error(), "n1") {
					t.Fatalf("boot: %v; want ErrMediumInUse naming the node", err)
				}
				if diff := cmp.Diff(map[string]string{tc.cd: "", tc.removable: foreign}, inserted(fake)); diff != "" {
					t.Errorf("media (-want +got):\n%s", diff)
				}
				if told := h.told(); len(told) > 0 {
					t.Errorf("the machine was told %q", told)
				}
				if diff := cmp.Diff([]string{"arm n1", "arm-answer n1", "disarm n1"}, m.Calls()); diff != "" {
					t.Errorf("media calls (-want +got):\n%s", diff)
				}
			})
		})
	}
}
