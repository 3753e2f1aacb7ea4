package power

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Media is where a virtual-media boot gets its medium: the window's
// per-node images (package vmedia over the state folder). It is called
// only for a registration whose boot method is
// [registry.BootVirtualMedia].
type Media interface {
	// Arm makes node name's medium servable and returns the one-time
	// URL its BMC fetches it from, an https one with https (its BMC
	// trusts the window's certificate: [registry.Site.MediaTLSOf]); a
	// URL armed before for it dies.
	Arm(ctx context.Context, name string, https bool) (string, error)
	// ArmAnswer makes node name's answer image servable, for an
	// installer that reads its answer from a second medium (media
	// answer [registry.MediaAnswerPartition]), and returns its own
	// one-time URL; one armed before for it dies.
	ArmAnswer(ctx context.Context, name string, https bool) (string, error)
	// Disarm kills node name's URLs; nothing armed is not an error.
	Disarm(ctx context.Context, name string) error
	// Ours says image is a URL of one of the window's media, which a
	// boot may eject (a stale one) where another image is never touched.
	Ours(image string) bool
}

// ErrNoMedia: a virtual-media boot was asked of a process that serves
// no media (its [Request] has no Media).
var ErrNoMedia = errors.New("no virtual media served here")

// Devices a boot boots from ([BootResult.Device]).
const (
	DevicePXE = "pxe"
	DeviceCD  = "cd"
)

// bootFromMedia lends the machine its medium and boots it once from it:
// insert (replacing only a stale image of ours), one-time CD boot in
// mode, then power on or cycle, as [Boot] does for PXE. With the media
// answer partition the CD is the generic partition-mode ISO and the
// node's answer image goes into a removable medium beside it; a BMC
// without one is refused before anything is armed or inserted. A
// failure after an insertion ejects what was inserted and kills the
// URLs, so the machine never boots an answer nobody waits for.
func bootFromMedia(ctx context.Context, req Request, r registry.Registration, c bmc.Controller, mode bmc.BootMode, res *BootResult) error {
	vm, ok := c.(bmc.VirtualMedia)
	if !ok {
		return fmt.Errorf("%s: BMC %s: %w: the %s protocol has no virtual media; use the network boot method", req.Name, r.BMC.URL, bmc.ErrNoVirtualMedia, c.Protocol())
	}
	if req.Media == nil {
		return fmt.Errorf("boot %s: %w (the window serves the media: boot it through the node-provisioner that runs the window)", req.Name, ErrNoMedia)
	}
	media, err := vm.Media(ctx)
	record(req, "read virtual media via "+c.Protocol(), err)
	if err != nil {
		return fmt.Errorf("%s: %w", req.Name, err)
	}
	_, answer := req.Site.BootOf(r)
	partition := answer == registry.MediaAnswerPartition
	if partition && !slices.ContainsFunc(media, bmc.Medium.Removable) {
		return fmt.Errorf("%s: BMC %s: read virtual media: %w: the partition media answer lends the answer image as a second, removable medium (MediaTypes USBStick or Floppy), and the BMC has only %s; use the media answer iso", req.Name, r.BMC.URL, bmc.ErrNoVirtualMedia, mediaList(media))
	}
	stale := false
	for _, m := range media {
		if m.Inserted && m.Image != "" && req.Media.Ours(m.Image) {
			stale = true
		}
	}
	https := req.Site.MediaTLSOf(r)
	url, err := req.Media.Arm(ctx, r.Name, https)
	var answerURL string
	if err == nil && partition {
		if answerURL, err = req.Media.ArmAnswer(ctx, r.Name, https); err != nil {
			req.Media.Disarm(context.WithoutCancel(ctx), req.Name)
		}
	}
	if err != nil && https {
		return fmt.Errorf("boot %s: the medium over HTTPS (media_tls is on for BMC %s or the site; turn it off to serve the medium over HTTP with its token): %w", req.Name, r.BMC.URL, err)
	}
	if err != nil {
		return fmt.Errorf("boot %s: the medium: %w", req.Name, err)
	}
	_, err = vm.InsertMedia(ctx, url, bmc.InsertOptions{Replace: stale})
	what := "insert the installer's medium via " + c.Protocol()
	if stale {
		what = "replace a stale medium of ours with the installer's via " + c.Protocol()
	}
	record(req, what, err)
	if err != nil {
		req.Media.Disarm(context.WithoutCancel(ctx), req.Name)
		return fmt.Errorf("%s: %w", req.Name, err)
	}
	inserted := []string{url}
	fail := func(err error) error {
		ejectMedium(context.WithoutCancel(ctx), req, vm, inserted...)
		return fmt.Errorf("%s: %w", req.Name, err)
	}
	if partition {
		_, err = vm.InsertMedia(ctx, answerURL, bmc.InsertOptions{Replace: stale, Removable: true})
		record(req, "insert the answer image as a removable medium via "+c.Protocol(), err)
		if err != nil {
			return fail(err)
		}
		inserted = append(inserted, answerURL)
	}
	err = vm.SetNextBootCD(ctx, mode)
	record(req, fmt.Sprintf("next boot CD (%s, once) via %s", mode, c.Protocol()), err)
	if err != nil {
		return fail(err)
	}
	res.Device = DeviceCD
	if err := powerUp(ctx, req, c, res); err != nil {
		return fail(err)
	}
	return nil
}

// ejectMedium ejects urls from vm and kills the node's URLs, recording
// each.
func ejectMedium(ctx context.Context, req Request, vm bmc.VirtualMedia, urls ...string) error {
	var errs []error
	for _, url := range urls {
		err := vm.EjectMedia(ctx, url)
		record(req, "eject the installer's medium via "+vm.Protocol(), err)
		errs = append(errs, err)
	}
	errs = append(errs, req.Media.Disarm(ctx, req.Name))
	return errors.Join(errs...)
}

// mediaList names the media as the BMC reports them: "CD (CD, DVD)".
func mediaList(media []bmc.Medium) string {
	var out []string
	for _, m := range media {
		out = append(out, m.ID+" ("+strings.Join(m.Types, ", ")+")")
	}
	if len(out) == 0 {
		return "no medium"
	}
	return strings.Join(out, "; ")
}

// Eject takes node req.Name's medium back: every CD or DVD of its BMC
// that holds one of our images ([Media.Ours]) is ejected, and its URL
// dies, so the machine never boots an old answer again. Call it when
// the node reports installed, when its boot fails, when it is re-armed
// and when the window closes. A registration whose boot method is not
// virtual media, or without a BMC, has nothing to eject: nil.
func Eject(ctx context.Context, req Request) error {
	if req.Media == nil {
		return fmt.Errorf("eject %s: %w", req.Name, ErrNoMedia)
	}
	r, _, err := findRegistration(ctx, req)
	if m, _ := req.Site.BootOf(r); errors.Is(err, ErrNoBMC) || (err == nil && m != registry.BootVirtualMedia) {
		return req.Media.Disarm(ctx, req.Name)
	}
	if err != nil {
		return err
	}
	c, err := openBMC(ctx, req, r)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	vm, ok := c.(bmc.VirtualMedia)
	if !ok {
		return req.Media.Disarm(ctx, req.Name)
	}
	media, err := vm.Media(ctx)
	if err != nil {
		record(req, "read virtual media via "+c.Protocol(), err)
		return fmt.Errorf("eject %s: %w", req.Name, err)
	}
	for _, m := range media {
		if m.Inserted && m.Image != "" && req.Media.Ours(m.Image) {
			if err := ejectMedium(ctx, req, vm, m.Image); err != nil {
				return fmt.Errorf("eject %s: %w", req.Name, err)
			}
		}
	}
	return req.Media.Disarm(ctx, req.Name)
}
