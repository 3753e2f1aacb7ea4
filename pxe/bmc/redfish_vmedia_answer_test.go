package bmc_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/bmc"
)

// TestRedfishAnswerImageRequestShapes drives the installer's partition
// mode against both vendor styles: the generic ISO into the CD, the
// node's answer image into the removable medium (RemovableDisk with
// actions, USBStick1 by PATCH), one boot from the CD, and both ejected;
// each request is compared with the recorded shapes, and the fake
// downloads both images whole.
func TestRedfishAnswerImageRequestShapes(t *testing.T) {
	iso := make([]byte, 2<<20+777)
	rand.Read(iso)
	answerImage := bytes.Repeat([]byte("PROXMOX-AIS answer image "), 2000)
	tests := map[string]struct {
		style       fakeredfish.MediaStyle
		golden      string
		cd, answers string
	}{
		"VirtualMedia under the Manager, with actions": {fakeredfish.MediaUnderManager, "vmedia-partition-managers.golden", "CD", "RemovableDisk"},
		"VirtualMedia under the System, PATCH only":    {fakeredfish.MediaUnderSystem, "vmedia-partition-systems.golden", "CD1", "USBStick1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			image, _ := imageServer(t, iso)
			answer, _ := imageServerAt(t, "/media/tok-4nsw3r/node.img", answerImage)
			fake, rec, vm := mediaLab(t, tc.style, fakeredfish.MediaConfig{}, image)
			rec.answer = answer
			if _, err := vm.InsertMedia(ctx, image, bmc.InsertOptions{}); err != nil {
				t.Fatal(err)
			}
			m, err := vm.InsertMedia(ctx, answer, bmc.InsertOptions{Removable: true})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(bmc.Medium{ID: tc.answers, Types: []string{"USBStick"}, Image: answer, Inserted: true, ConnectedVia: "URI"}, m); diff != "" {
				t.Errorf("the answer image's medium (-want +got):\n%s", diff)
			}
			for id, want := range map[string][]byte{tc.cd: iso, tc.answers: answerImage} {
				file, err := fake.WaitMedium(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if got, _ := os.ReadFile(file); !bytes.Equal(got, want) {
					t.Errorf("medium %s: the fake's download differs from the image (%d bytes, want %d)", id, len(got), len(want))
				}
			}
			if err := vm.SetNextBootCD(ctx, bmc.BootUEFI); err != nil {
				t.Fatal(err)
			}
			if err := vm.PowerOn(ctx); err != nil {
				t.Fatal(err)
			}
			for _, img := range []string{image, answer} {
				if err := vm.EjectMedia(ctx, img); err != nil {
					t.Fatal(err)
				}
			}
			for _, st := range fake.Media() {
				if st.Inserted || st.Image != "" {
					t.Errorf("medium %s still holds an image after the ejects", st.ID)
				}
			}
			golden(t, tc.golden, strings.Join(rec.lines, "\n")+"\n")
		})
	}
}

// A BMC with only a CD has no medium for an answer image
// (ErrNoVirtualMedia, saying what it has); a removable medium holding
// another image is not taken (ErrMediumInUse); in both styles.
func TestRedfishAnswerImageRefusals(t *testing.T) {
	ctx := context.Background()
	content := make([]byte, 64<<10)
	rand.Read(content)
	for name, style := range styles {
		t.Run(name, func(t *testing.T) {
			image, _ := imageServer(t, content)
			answer, _ := imageServerAt(t, "/media/tok-4nsw3r/node.img", content)
			t.Run("a BMC with only a CD", func(t *testing.T) {
				fake, _, vm := mediaLab(t, style, fakeredfish.MediaConfig{CDOnly: true}, image)
				_, err := vm.InsertMedia(ctx, answer, bmc.InsertOptions{Removable: true})
				checkVMError(t, err, bmc.ErrNoVirtualMedia, "insert virtual media")
				if !strings.Contains(err.Error(), "no medium has MediaTypes USBStick or Floppy") {
					t.Errorf("%v; want it to say no medium takes a removable disk", err)
				}
				if len(fake.Media()) != 1 || fake.Media()[0].Inserted {
					t.Errorf("media %+v; want one CD, empty", fake.Media())
				}
			})
			t.Run("a removable medium holding another image", func(t *testing.T) {
				_, _, vm := mediaLab(t, style, fakeredfish.MediaConfig{}, image)
				if _, err := vm.InsertMedia(ctx, image, bmc.InsertOptions{Removable: true}); err != nil {
					t.Fatal(err)
				}
				_, err := vm.InsertMedia(ctx, answer, bmc.InsertOptions{Removable: true})
				checkVMError(t, err, bmc.ErrMediumInUse, "insert virtual media")
			})
		})
	}
}
