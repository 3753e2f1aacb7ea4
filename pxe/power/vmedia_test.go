package power_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/power/powertest"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// hook is the machine behind the fake BMC: it keeps what it was told.
type hook struct {
	mu  sync.Mutex
	on  bool
	set []string
}

func (h *hook) Power(context.Context) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.on, nil
}

func (h *hook) Set(_ context.Context, what, value string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.set = append(h.set, what+" "+value)
	if what == "power" {
		h.on = value == "1"
	}
	return nil
}

func (h *hook) told() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.set...)
}

// vmLab is a registration n1 booting by virtual media behind a fake
// Redfish BMC of style, with an open window.
func vmLab(t *testing.T, style fakeredfish.MediaStyle) (*fakeredfish.Server, power.Request, *powertest.Media, *hook) {
	t.Helper()
	return vmLabOf(t, fakeredfish.MediaConfig{Style: style})
}

// vmLabOf is vmLab with the fake's media of mc.
func vmLabOf(t *testing.T, mc fakeredfish.MediaConfig) (*fakeredfish.Server, power.Request, *powertest.Media, *hook) {
	t.Helper()
	h := &hook{}
	mc.Dir, mc.RangeBytes = t.TempDir(), 64<<10
	fake := fakeredfish.New(fakeredfish.Config{User: "root", Password: "calvin-pw", SystemIDs: []string{"1"}, Hook: h, Media: mc})
	state := t.TempDir()
	if err := window.Write(state, &window.Record{PID: os.Getpid(), Started: time.Now(), Deadline: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	m := powertest.NewMedia(t)
	req := vmRequest(t, fake, state, false, m)
	return fake, req, m, h
}

// vmRequest serves fake over TLS and registers n1 in state, booting from
// virtual media behind it (its BMC's media_tls as mediaTLS): the request
// to boot n1 with media.
func vmRequest(t *testing.T, fake *fakeredfish.Server, state string, mediaTLS bool, media power.Media) power.Request {
	t.Helper()
	srv := httptest.NewTLSServer(fake)
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(srv.Certificate().Raw)
	regs, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := folder.OpenSecrets(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := &registry.BMC{URL: "redfish://" + strings.TrimPrefix(srv.URL, "https://") + "/1", User: "root", Fingerprint: hex.EncodeToString(sum[:]), MediaTLS: mediaTLS}
	r := registry.Registration{Name: "n1", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}, BMC: b, BootMethod: registry.BootVirtualMedia}
	if _, err := regs.Register(t.Context(), r, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sec.WriteBMCPassword(t.Context(), "n1", "calvin-pw"); err != nil {
		t.Fatal(err)
	}
	return power.Request{Registrations: regs, Secrets: sec, Window: folder.Window(state), Name: "n1", Media: media, Options: bmc.Options{Backoff: 10 * time.Millisecond}}
}

// inserted is the image each medium of fake holds ("" for none).
func inserted(fake *fakeredfish.Server) map[string]string {
	out := map[string]string{}
	for _, m := range fake.Media() {
		out[m.ID] = m.Image
	}
	return out
}

// TestBootFromVirtualMedia: a virtual-media registration boots its
// medium once from the BMC's virtual CD, in both vendor styles: the
// medium armed, inserted, the one-time boot a Cd in UEFI mode, power on;
// Eject then takes it out and kills its URL.
func TestBootFromVirtualMedia(t *testing.T) {
	for name, style := range map[string]fakeredfish.MediaStyle{"under the Manager": fakeredfish.MediaUnderManager, "under the System": fakeredfish.MediaUnderSystem} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			fake, req, m, h := vmLab(t, style)
			res, err := power.Boot(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(power.BootResult{Protocol: "redfish", Mode: bmc.BootUEFI, Was: bmc.PowerOff, Device: power.DeviceCD}, res); diff != "" {
				t.Errorf("boot result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"boot cd", "power 1"}, h.told()); diff != "" {
				t.Errorf("the machine was told (-want +got):\n%s", diff)
			}
			if _, _, mode := fake.Override(); mode != "UEFI" {
				t.Errorf("boot override mode %s; want UEFI", mode)
			}
			cd := map[fakeredfish.MediaStyle]string{fakeredfish.MediaUnderManager: "CD", fakeredfish.MediaUnderSystem: "CD1"}[style]
			if img := inserted(fake)[cd]; !m.Ours(img) || !strings.HasSuffix(img, "/n1.iso") {
				t.Errorf("medium %s holds %q; want n1's medium", cd, img)
			}
			if _, err := fake.WaitMedium(ctx, cd); err != nil {
				t.Errorf("the BMC could not fetch the medium: %v", err)
			}
			if err := power.Eject(ctx, req); err != nil {
				t.Fatal(err)
			}
			if img := inserted(fake)[cd]; img != "" {
				t.Errorf("after Eject medium %s holds %q", cd, img)
			}
			if diff := cmp.Diff([]string{"arm n1", "disarm n1", "disarm n1"}, m.Calls()); diff != "" {
				t.Errorf("media calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBootFromVirtualMediaRefusals: a stale medium of ours is replaced,
// another image is never taken (ErrMediumInUse, naming the BMC), an
// image the BMC cannot fetch is ErrImageRefused with its URL killed, a
// BMC without virtual media is ErrNoVirtualMedia, and a process that
// serves no media refuses with ErrNoMedia.
func TestBootFromVirtualMediaRefusals(t *testing.T) {
	ctx := t.Context()
	t.Run("a stale medium of ours is replaced", func(t *testing.T) {
		fake, req, m, _ := vmLab(t, fakeredfish.MediaUnderManager)
		if _, err := power.Boot(ctx, req); err != nil {
			t.Fatal(err)
		}
		first := inserted(fake)["CD"]
		if _, err := power.Boot(ctx, req); err != nil {
			t.Fatalf("a second boot over our own stale medium: %v", err)
		}
		if now := inserted(fake)["CD"]; now == first || !m.Ours(now) {
			t.Errorf("the medium is %q, was %q: want a new URL of ours", now, first)
		}
	})
	t.Run("another image is never taken", func(t *testing.T) {
		fake, req, m, _ := vmLab(t, fakeredfish.MediaUnderManager)
		other := powertest.NewMedia(t)
		foreign, _ := other.Arm(ctx, "theirs", false)
		vm := openVM(t, req)
		if _, err := vm.InsertMedia(ctx, foreign, bmc.InsertOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := power.Boot(ctx, req)
		if !errors.Is(err, bmc.ErrMediumInUse) || !strings.Contains(err.Error(), "n1") {
			t.Fatalf("boot over another image: %v; want ErrMediumInUse naming the node", err)
		}
		if inserted(fake)["CD"] != foreign {
			t.Errorf("the other image was replaced: %q", inserted(fake)["CD"])
		}
		if diff := cmp.Diff([]string{"arm n1", "disarm n1"}, m.Calls()); diff != "" {
			t.Errorf("media calls (-want +got):\n%s", diff)
		}
		if err := power.Eject(ctx, req); err != nil || inserted(fake)["CD"] != foreign {
			t.Errorf("Eject: %v; the other image %q must stay", err, inserted(fake)["CD"])
		}
	})
	t.Run("an image the BMC cannot fetch", func(t *testing.T) {
		_, req, m, h := vmLab(t, fakeredfish.MediaUnderSystem)
		m.Refuse()
		_, err := power.Boot(ctx, req)
		if !errors.Is(err, bmc.ErrImageRefused) {
			t.Fatalf("boot: %v; want ErrImageRefused", err)
		}
		if told := h.told(); len(told) > 0 {
			t.Errorf("the machine was told %q without a medium", told)
		}
		if diff := cmp.Diff([]string{"arm n1", "disarm n1"}, m.Calls()); diff != "" {
			t.Errorf("media calls (-want +got):\n%s", diff)
		}
	})
	t.Run("a BMC without virtual media", func(t *testing.T) {
		_, req, _, _ := vmLab(t, fakeredfish.NoMedia)
		if _, err := power.Boot(ctx, req); !errors.Is(err, bmc.ErrNoVirtualMedia) {
			t.Fatalf("boot: %v; want ErrNoVirtualMedia", err)
		}
	})
	t.Run("the site's boot method applies", func(t *testing.T) {
		fake, req, m, _ := vmLab(t, fakeredfish.MediaUnderManager)
		r, _ := req.Registrations.Get(ctx, "n1")
		r.BootMethod = ""
		if _, err := req.Registrations.Register(ctx, r, registry.RegisterOptions{Replace: true}); err != nil {
			t.Fatal(err)
		}
		req.Site = registry.Site{BootMethod: registry.BootVirtualMedia}
		if res, err := power.Boot(ctx, req); err != nil || res.Device != power.DeviceCD || !m.Ours(inserted(fake)["CD"]) {
			t.Fatalf("boot by the site's virtual media: %+v %v; medium %q", res, err, inserted(fake)["CD"])
		}
		if err := power.Eject(ctx, req); err != nil || inserted(fake)["CD"] != "" {
			t.Errorf("Eject by the site's method: %v, medium %q", err, inserted(fake)["CD"])
		}
	})
	t.Run("no media served", func(t *testing.T) {
		_, req, _, _ := vmLab(t, fakeredfish.MediaUnderManager)
		req.Media = nil
		if _, err := power.Boot(ctx, req); !errors.Is(err, power.ErrNoMedia) {
			t.Fatalf("boot: %v; want ErrNoMedia", err)
		}
	})
}

// openVM opens req's BMC as the test's own client.
func openVM(t *testing.T, req power.Request) bmc.VirtualMedia {
	t.Helper()
	r, err := req.Registrations.Get(t.Context(), req.Name)
	if err != nil {
		t.Fatal(err)
	}
	e, err := bmc.Parse(r.BMC.URL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := power.Open(e, bmc.Credentials{User: "root", Password: "calvin-pw"}, r.BMC.Options(bmc.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c.(bmc.VirtualMedia)
}
