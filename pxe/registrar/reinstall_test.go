package registrar_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	state, secretsDir := t.TempDir(), t.TempDir()
	regs, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := folder.OpenSecrets(secretsDir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := regbackend.New(regbackend.Config{Store: regs, Secrets: secrets, StateDir: state,
		Events: folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{}), AllowRefresh: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const mac = "52:54:00:00:00:01"
	r := withBMC("pve1", mac)
	if _, err := registrar.Register(ctx, regs, secrets, r, registry.RegisterOptions{}, "bmc-secret"); err != nil {
		t.Fatal(err)
	}
	answerOnce := func() string {
		t.Helper()
		si, err := answer.ParseSystemInfo([]byte(`{"iso":{"release":"9.2"},"network_interfaces":[{"link":"eth0","mac":"`+mac+`"}]}`), "application/json")
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.Answer(ctx, backend.AnswerRequest{Info: si, Version: answer.Version92, ClientIP: "192.0.2.9", BaseURL: "http://192.0.2.1:8090"})
		if err != nil {
			t.Fatalf("answer: %v", err)
		}
		if err := res.Claim(ctx); err != nil { // the window's claim step
			t.Fatalf("claim: %v", err)
		}
		res.Delivered(nil)
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

	got, err := regbackend.Reinstall(ctx, regs, secrets, "pve1", nil)
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
	state, secretsDir := t.TempDir(), t.TempDir()
	regs, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := folder.OpenSecrets(secretsDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := regs.Register(ctx, registry.Registration{Name: "pve2", MACs: []string{"52:54:00:00:00:02"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pve2", "nosuch"} {
		if _, err := regbackend.Reinstall(ctx, regs, secrets, name, nil); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("reinstall %s = %v, want ErrNotFound", name, err)
		}
		if _, err := os.Stat(secrets.PreviousPath(name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("reinstall %s left a previous password: %v", name, err)
		}
	}
	if _, err := regbackend.Reinstall(ctx, regs, secrets, "../x", nil); !errors.Is(err, registry.ErrInvalidName) {
		t.Errorf("reinstall ../x = %v, want ErrInvalidName", err)
	}
}
