package power_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/bmctest"
	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/window"
)

func register(t *testing.T, state, secrets string, b *registry.BMC, pw string) {
	ctx := t.Context()
	t.Helper()
	reg, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := registry.Registration{Name: "n1", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}, BMC: b}
	if _, err := reg.Register(context.Background(), r, registry.RegisterOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if b != nil {
		s, _ := folder.OpenSecrets(secrets)
		if _, err := s.WriteBMCPassword(ctx, "n1", pw); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBootAndPower(t *testing.T) {
	ctx := context.Background()
	state, secrets := t.TempDir(), filepath.Join(t.TempDir(), "secrets")
	regs, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := folder.OpenSecrets(secrets)
	if err != nil {
		t.Fatal(err)
	}
	req := power.Request{Registrations: regs, Secrets: sec, Window: folder.Window(state), Name: "n1"}

	register(t, state, secrets, nil, "")
	if _, err := power.Node(ctx, req, power.Status); !errors.Is(err, power.ErrNoBMC) {
		t.Errorf("no BMC: %v", err)
	}
	hook := bmctest.StateHook(t)
	sim := bmctest.Start(t, hook, "admin", "pw-123")
	register(t, state, secrets, &registry.BMC{URL: sim.Endpoint(), User: "admin"}, "pw-123")
	for what, r := range map[string]power.Request{"registrations": {Secrets: sec, Window: req.Window, Name: "n1"}, "secrets": {Registrations: regs, Window: req.Window, Name: "n1"}} {
		if _, err := power.Node(ctx, r, power.Status); !errors.Is(err, power.ErrNoStore) || !strings.Contains(err.Error(), what) {
			t.Errorf("a request without its %s: %v", what, err)
		}
	}
	if _, err := power.Boot(ctx, power.Request{Registrations: regs, Secrets: sec, Name: "n1"}); !errors.Is(err, power.ErrNoStore) {
		t.Errorf("a boot without the window state: %v", err)
	}
	if _, err := power.Boot(ctx, req); !errors.Is(err, power.ErrBootRefused) || !strings.Contains(err.Error(), "window is closed") {
		t.Errorf("window closed: %v", err)
	}
	if err := window.Write(state, &window.Record{PID: os.Getpid(), Started: time.Now(), Deadline: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	res, err := power.Boot(ctx, req)
	if err != nil || res.Protocol != "ipmi" || res.Mode != bmc.BootUEFI || res.Was != bmc.PowerOff || res.Cycled {
		t.Fatalf("boot: %+v %v", res, err)
	}
	if got := bmctest.Read(hook, "boots"); got != "pxe" {
		t.Errorf("boots %q", got)
	}
	if p, err := power.Node(ctx, req, power.Off); err != nil || p != bmc.PowerOff {
		t.Errorf("off: %v %v", p, err)
	}
	if _, err := power.Node(ctx, req, "reboot"); err == nil {
		t.Error("an unknown action was taken")
	}
	if _, err := power.Open(bmc.Endpoint{Protocol: "ssh", Host: "x"}, bmc.Credentials{User: "u"}, bmc.Options{}); !errors.Is(err, bmc.ErrInvalidEndpoint) {
		t.Errorf("unknown protocol: %v", err)
	}
	// Forget keeps the password while the registration names the BMC.
	if err := power.Forget(ctx, req); err != nil {
		t.Fatal(err)
	}
	s, _ := folder.OpenSecrets(secrets)
	if _, err := s.ReadBMCPassword(ctx, "n1"); err != nil {
		t.Errorf("Forget removed a password in use: %v", err)
	}
	reg, _ := folder.OpenRegistrations(state, nil)
	reg.Delete(ctx, "n1")
	if err := power.Forget(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadBMCPassword(ctx, "n1"); err == nil {
		t.Error("Forget kept the password of an unregistered node")
	}
}

// TestASiteSecretIsReadAtUse: a registration whose BMC names a site
// secret (an enrolment rule's) logs in with that secret's value as it
// is when the BMC is used, not a copy; a request without the site
// secrets, or a secret not set, is refused before the BMC is asked.
func TestASiteSecretIsReadAtUse(t *testing.T) {
	ctx := t.Context()
	state := t.TempDir()
	regs, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := folder.OpenSecrets(filepath.Join(t.TempDir(), "secrets"))
	if err != nil {
		t.Fatal(err)
	}
	site := folder.OpenSiteSecrets(state)
	sim := bmctest.Start(t, bmctest.StateHook(t), "admin", "rotated-Pa55")
	r := registry.Registration{Name: "n1", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny},
		BMC: &registry.BMC{URL: sim.Endpoint(), User: "admin", Secret: "bmc-rack1"}}
	if _, err := regs.Register(ctx, r, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	req := power.Request{Registrations: regs, Secrets: sec, Window: folder.Window(state), Name: "n1"}
	if _, err := power.Node(ctx, req, power.Status); !errors.Is(err, power.ErrNoStore) || !strings.Contains(err.Error(), "site secrets") {
		t.Errorf("without the site secrets: %v; want ErrNoStore naming them", err)
	}
	req.SiteSecrets = site
	if _, err := power.Node(ctx, req, power.Status); !errors.Is(err, secret.ErrNoSiteSecret) || !strings.Contains(err.Error(), "bmc-rack1") {
		t.Errorf("with the secret not set: %v; want ErrNoSiteSecret naming it", err)
	}
	if err := site.SetSiteSecret(ctx, "bmc-rack1", "old-Pa55"); err != nil {
		t.Fatal(err)
	}
	if _, err := power.Node(ctx, req, power.Status); !errors.Is(err, bmc.ErrAuthRefused) || strings.Contains(err.Error(), "old-Pa55") {
		t.Errorf("with the old value: %v; want the BMC's refusal, without the value", err)
	}
	if err := site.SetSiteSecret(ctx, "bmc-rack1", "rotated-Pa55"); err != nil {
		t.Fatal(err)
	}
	if p, err := power.Node(ctx, req, power.Status); err != nil || p != bmc.PowerOff {
		t.Errorf("after the secret was rotated: %q, %v; want the status", p, err)
	}
}
