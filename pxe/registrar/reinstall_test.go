package registrar_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestReinstall: an installed node is re-armed as a new one-shot with its
// pins and BMC; its machine is offered the installer again (not the
// installed machine's exit) for one install, answered with a new root
// password, while the old one is kept until the new install reports in.
func TestReinstall(t *testing.T) {
	ctx := context.Background()
	rig := newReinstallRig(t)
	state, regs, secrets, b := rig.state, rig.regs, rig.secrets, rig.b
	const mac = "52:54:00:00:00:01"
	r := withBMC("pve1", mac)
	if _, err := registrar.Register(ctx, regs, secrets, r, registry.RegisterOptions{}, "bmc-secret"); err != nil {
		t.Fatal(err)
	}
	answerOnce := func() string {
		t.Helper()
		rig.answer(t, mac)
		pw, err := os.ReadFile(secrets.PasswordPath("pve1"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(pw))
	}
	boot := func() backend.Boot {
		t.Helper()
		time.Sleep(5 * time.Millisecond) // past the allowlist's refresh
		bt, err := b.Boot(ctx, mac)
		if err != nil {
			t.Fatal(err)
		}
		return bt
	}
	report := func() {
		t.Helper()
		tokens, _ := filepath.Glob(filepath.Join(state, regbackend.FirstBootDirName, "*.webhook"))
		if len(tokens) != 1 {
			t.Fatalf("webhook tokens %v, want the last install's one", tokens)
		}
		if _, err := b.Installed(ctx, strings.TrimSuffix(filepath.Base(tokens[0]), ".webhook"), "192.0.2.9", nil); err != nil {
			t.Fatal(err)
		}
	}
	first := answerOnce()
	report()
	if bt := boot(); bt.Node != "" {
		t.Fatalf("an installed machine boots %+v, want the exit", bt)
	}

	got, err := regbackend.Reinstall(ctx, regs, secrets, "pve1", regbackend.ReinstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.BMC == nil || got.Consumed != nil || got.MACs[0] != mac {
		t.Errorf("reinstall returned %+v, want pve1 pending with its MAC and BMC", got)
	}
	if bt := boot(); bt.Node != "pve1" {
		t.Errorf("after reinstall the machine boots %+v, want the installer as pve1", bt)
	}
	if pw, err := secrets.ReadBMCPassword(ctx, "pve1"); err != nil || pw != "bmc-secret" {
		t.Errorf("the BMC password after reinstall = %q, %v; want it kept", pw, err)
	}
	second := answerOnce()
	if second == first {
		t.Error("the reinstall's answer has the old root password, want a new one")
	}
	prev, err := os.ReadFile(secrets.PreviousPath("pve1"))
	if err != nil || strings.TrimSpace(string(prev)) != first {
		t.Errorf("the previous password = %q, %v; want the first install's kept", prev, err)
	}
	if fi, err := os.Stat(secrets.PreviousPath("pve1")); err == nil && fi.Mode().Perm() != 0o600 {
		t.Errorf("the previous password's mode is %v, want 0600", fi.Mode().Perm())
	}
	if bt := boot(); bt.Node != "" {
		t.Errorf("after the reinstall's answer the machine boots %+v, want the exit again", bt)
	}

	// The new install reports in: the previous password goes.
	report()
	if _, err := os.Stat(secrets.PreviousPath("pve1")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after the install reported in, the previous password is still kept: %v", err)
	}
}

// TestReinstallRefusals: a pending or unknown registration is not
// reinstalled, and nothing is written.
func TestReinstallRefusals(t *testing.T) {
	ctx := context.Background()
	rig := newReinstallRig(t)
	regs, secrets := rig.regs, rig.secrets
	if _, err := regs.Register(ctx, registry.Registration{Name: "pve2", MACs: []string{"52:54:00:00:00:02"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pve2", "nosuch"} {
		if _, err := regbackend.Reinstall(ctx, regs, secrets, name, regbackend.ReinstallOptions{}); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("reinstall %s = %v, want ErrNotFound", name, err)
		}
		if _, err := os.Stat(secrets.PreviousPath(name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("reinstall %s left a previous password: %v", name, err)
		}
	}
	if _, err := regbackend.Reinstall(ctx, regs, secrets, "../x", regbackend.ReinstallOptions{}); !errors.Is(err, registry.ErrInvalidName) {
		t.Errorf("reinstall ../x = %v, want ErrInvalidName", err)
	}
}

// TestReinstallKeepsDataUnlessAsked: a reinstall keeps the node's data
// pools (its answer's disk filter selects the boot disk alone, and its
// first-boot script imports the pools it finds), one asked to wipe data
// has the script create them anew, and the next plain reinstall keeps
// them again.
func TestReinstallKeepsDataUnlessAsked(t *testing.T) {
	ctx := context.Background()
	rig := newReinstallRig(t)
	state, regs, secrets := rig.state, rig.regs, rig.secrets
	const mac = "52:54:00:00:00:07"
	pool, err := registry.ParsePoolSpec("tank=mirror:S4EWNX0N123456,WD-WCC4E1234567")
	if err != nil {
		t.Fatal(err)
	}
	r := registry.Registration{Name: "pve7", MACs: []string{mac}, BootDisk: answer.BootDisk{Kind: answer.BootDiskSerial, Value: "25414A800205"}, Pools: []registry.DataPool{pool}}
	if _, err := regs.Register(ctx, r, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	install := func() (filter map[string]string, script string) {
		t.Helper()
		res := rig.answer(t, mac)
		scripts, _ := filepath.Glob(filepath.Join(state, regbackend.FirstBootDirName, "*.sh"))
		for _, p := range scripts {
			if !seen[p] {
				seen[p] = true
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				script = string(data)
			}
		}
		return res.Answer.DiskSetup.Filter, script
	}
	wantWipe := func(what, script string, wipe bool) {
		t.Helper()
		want := "\nWIPE_DATA=0\n"
		if wipe {
			want = "\nWIPE_DATA=1\n"
		}
		if !strings.Contains(script, want) {
			t.Errorf("%s: the first-boot script lacks %q:\n%.400s", what, strings.TrimSpace(want), script)
		}
	}
	_, script := install()
	wantWipe("first install", script, false)

	for _, step := range []struct {
		what string
		wipe bool
	}{{"reinstall", false}, {"reinstall wiping data", true}, {"reinstall after one that wiped", false}} {
		got, err := regbackend.Reinstall(ctx, regs, secrets, "pve7", regbackend.ReinstallOptions{WipeData: step.wipe})
		if err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		if got.WipeData != step.wipe {
			t.Errorf("%s: the re-armed registration's WipeData = %t, want %t", step.what, got.WipeData, step.wipe)
		}
		if p, err := regs.Get(ctx, "pve7"); err != nil || p.WipeData != step.wipe {
			t.Errorf("%s: pending = %+v, %v; want WipeData %t", step.what, p, err, step.wipe)
		}
		filter, script := install()
		if diff := cmp.Diff(map[string]string{"ID_SERIAL": "*25414A800205*"}, filter); diff != "" {
			t.Errorf("%s: the answer's disk filter (-want +got):\n%s", step.what, diff)
		}
		for _, d := range pool.Disks {
			if m, _ := path.Match(filter["ID_SERIAL"], d); m {
				t.Errorf("%s: the boot disk filter also selects data disk %s", step.what, d)
			}
		}
		wantWipe(step.what, script, step.wipe)
	}
}

// reinstallRig is a state folder's registrations and secrets with a
// registrations backend serving them, as the window has them.
type reinstallRig struct {
	state   string
	regs    *folder.Registrations
	secrets *folder.Secrets
	b       *regbackend.Backend
}

func newReinstallRig(t *testing.T) *reinstallRig {
	t.Helper()
	state := t.TempDir()
	regs, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := folder.OpenSecrets(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := regbackend.New(regbackend.Config{Store: regs, Secrets: secrets, StateDir: state,
		Events: folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{}), AllowRefresh: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return &reinstallRig{state: state, regs: regs, secrets: secrets, b: b}
}

// answer has the backend answer the 9.2 installer of the machine with
// NIC mac, claims and delivers the answer, as the window does.
func (r *reinstallRig) answer(t *testing.T, mac string) *backend.Answer {
	t.Helper()
	ctx := context.Background()
	si, err := answer.ParseSystemInfo([]byte(`{"iso":{"release":"9.2"},"network_interfaces":[{"link":"eth0","mac":"`+mac+`"}]}`), "application/json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.b.Answer(ctx, backend.AnswerRequest{Info: si, Version: answer.Version92, ClientIP: "192.0.2.9", BaseURL: "http://192.0.2.1:8090"})
	if err != nil {
		t.Fatalf("answer: %v", err)
	}
	if err := res.Claim(ctx); err != nil { // the window's claim step
		t.Fatalf("claim: %v", err)
	}
	res.Delivered(nil)
	return res
}
