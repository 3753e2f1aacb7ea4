package registrar_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// The API's client is the remote Registrar.
var _ registrar.Registrar = (*client.Client)(nil)

func withBMC(name, mac string) registry.Registration {
	return registry.Registration{Name: name, MACs: []string{mac}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"},
		BMC: &registry.BMC{URL: "ipmi://192.0.2.10", User: "admin"}}
}

// TestLocalKeepsTheBMCPasswordWithItsRegistration: the password is
// written once the registration is accepted, a refused one leaves the
// kept password alone, and unregister removes it.
func TestLocalKeepsTheBMCPasswordWithItsRegistration(t *testing.T) {
	ctx := context.Background()
	dir, secretsDir := t.TempDir(), t.TempDir()
	l := &registrar.Local{Dir: dir, SecretsDir: secretsDir}
	secrets, err := folder.OpenSecrets(secretsDir)
	if err != nil {
		t.Fatal(err)
	}
	password := func() string {
		pw, err := secrets.ReadBMCPassword(ctx, "pve1")
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, registry.ErrInvalidBMC) {
			return ""
		}
		if err != nil {
			t.Fatal(err)
		}
		return pw
	}
	if _, err := l.Register(ctx, withBMC("pve1", "52:54:00:00:00:01"), registry.RegisterOptions{}); !errors.Is(err, registrar.ErrInvalidPassword) {
		t.Errorf("a BMC without its password = %v, want ErrInvalidPassword", err)
	}
	if _, err := l.RegisterWithBMCPassword(ctx, withBMC("pve1", "52:54:00:00:00:01"), registry.RegisterOptions{}, "first"); err != nil {
		t.Fatal(err)
	}
	if got := password(); got != "first" {
		t.Fatalf("password = %q, want first", got)
	}
	if _, err := l.Register(ctx, registry.Registration{Name: "pve2", MACs: []string{"52:54:00:00:00:02"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.RegisterWithBMCPassword(ctx, withBMC("pve1", "52:54:00:00:00:02"), registry.RegisterOptions{}, "second"); !errors.Is(err, registry.ErrPinTaken) {
		t.Fatalf("re-registration with pve2's MAC = %v, want ErrPinTaken", err)
	}
	if got := password(); got != "first" {
		t.Errorf("after a refused re-registration the password is %q, want first", got)
	}
	if err := l.Unregister(ctx, "pve1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(secrets.BMCPasswordPath("pve1")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unregister left the BMC password: %v", err)
	}
}

// failingSecrets cannot keep a BMC password.
type failingSecrets struct{ secret.Store }

func (failingSecrets) WriteBMCPassword(context.Context, string, string) (string, error) {
	return "", errors.New("disk full")
}

// TestRegisterUndoesWhenThePasswordCannotBeKept: no registration is left
// with a BMC and no password; a replaced one comes back.
func TestRegisterUndoesWhenThePasswordCannotBeKept(t *testing.T) {
	ctx := context.Background()
	regs, err := folder.OpenRegistrations(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registrar.Register(ctx, regs, failingSecrets{}, withBMC("pve1", "52:54:00:00:00:01"), registry.RegisterOptions{}, "pw"); err == nil {
		t.Fatal("Register succeeded without keeping the password")
	}
	if _, err := regs.Get(ctx, "pve1"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("the registration stayed without its password: %v", err)
	}
	plain := registry.Registration{Name: "pve1", MACs: []string{"52:54:00:00:00:09"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sdb"}}
	if _, err := regs.Register(ctx, plain, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := registrar.Register(ctx, regs, failingSecrets{}, withBMC("pve1", "52:54:00:00:00:01"), registry.RegisterOptions{}, "pw"); err == nil {
		t.Fatal("Register succeeded without keeping the password")
	}
	got, err := regs.Get(ctx, "pve1")
	if err != nil || got.BMC != nil || got.BootDisk.Value != "sdb" {
		t.Errorf("after the failed replacement pve1 = %+v, %v; want the earlier registration back", got, err)
	}
}

// TestTheBMCPasswordGoesOnEveryPath: against a real secrets folder, a
// registration without a BMC replacing one with a BMC removes its
// password, and so does a registration taking the pins of one that had
// a BMC and leaves it pinning nothing (removed); one left with a pin
// keeps its BMC and its password.
func TestTheBMCPasswordGoesOnEveryPath(t *testing.T) {
	ctx := context.Background()
	dir, secretsDir := t.TempDir(), t.TempDir()
	l := &registrar.Local{Dir: dir, SecretsDir: secretsDir}
	secrets, err := folder.OpenSecrets(secretsDir)
	if err != nil {
		t.Fatal(err)
	}
	kept := func(name string) bool {
		t.Helper()
		_, err := os.Lstat(secrets.BMCPasswordPath(name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		return err == nil
	}
	plain := func(name, mac string) registry.Registration {
		return registry.Registration{Name: name, MACs: []string{mac}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}
	}
	for _, r := range []registry.Registration{withBMC("pve1", "52:54:00:00:01:01"), withBMC("pve2", "52:54:00:00:01:02")} {
		if _, err := l.RegisterWithBMCPassword(ctx, r, registry.RegisterOptions{}, "pw-"+r.Name); err != nil {
			t.Fatal(err)
		}
	}
	pve3 := withBMC("pve3", "52:54:00:00:01:03")
	pve3.MACs = append(pve3.MACs, "52:54:00:00:01:33")
	if _, err := l.RegisterWithBMCPassword(ctx, pve3, registry.RegisterOptions{}, "pw-pve3"); err != nil {
		t.Fatal(err)
	}
	// pve1 again, without a BMC: its password goes.
	if _, err := l.Register(ctx, plain("pve1", "52:54:00:00:01:01"), registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	if kept("pve1") {
		t.Error("pve1 registered again without a BMC kept its BMC password")
	}
	// pve4 takes pve2's only MAC: pve2 is removed, with its password.
	res, err := l.Register(ctx, plain("pve4", "52:54:00:00:01:02"), registry.RegisterOptions{Replace: true})
	if err != nil || len(res.Moved) != 1 || !res.Moved[0].Removed {
		t.Fatalf("pve4 taking pve2's MAC: %+v, %v", res, err)
	}
	if kept("pve2") {
		t.Error("pve2, removed when pve4 took its MAC, kept its BMC password")
	}
	// pve5 takes one of pve3's two MACs: pve3 stays with its BMC and
	// its password.
	if _, err := l.Register(ctx, plain("pve5", "52:54:00:00:01:33"), registry.RegisterOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if !kept("pve3") {
		t.Error("pve3, left with its BMC when pve5 took one MAC, lost its BMC password")
	}
	// Through Register, with a BMC of its own, a registration taking
	// pve3's last MAC removes pve3 and its password, and keeps its own.
	regs, err := folder.OpenRegistrations(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registrar.Register(ctx, regs, secrets, withBMC("pve6", "52:54:00:00:01:03"), registry.RegisterOptions{Replace: true}, "pw-pve6"); err != nil {
		t.Fatal(err)
	}
	if !kept("pve6") || kept("pve3") {
		t.Errorf("pve6 taking pve3's last MAC: kept pve6 %v, pve3 %v; want pve6's alone", kept("pve6"), kept("pve3"))
	}
}

// TestLocalOpensItsStoresOnce: a read of a folder without registrations
// opens nothing, and every call after the first open shares its stores
// (one writer per process).
func TestLocalOpensItsStoresOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir() + "/state"
	l := &registrar.Local{Dir: dir, SecretsDir: t.TempDir()}
	if nodes, err := l.Nodes(ctx); len(nodes) != 0 || err != nil {
		t.Fatalf("Nodes of a missing folder: %v, %v", nodes, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a read created the state folder: %v", err)
	}
	r := registry.Registration{Name: "pve1", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}
	if _, err := l.Register(ctx, r, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	first, err := l.Stores(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Nodes(ctx); err != nil {
		t.Fatal(err)
	}
	if again, err := l.Stores(ctx); again != first || err != nil {
		t.Errorf("Stores opened again: %p then %p (%v)", first, again, err)
	}
}

var (
	_ registrar.Inbox = (*client.Client)(nil)
	_ registrar.Inbox = (*registrar.Local)(nil)
)

// TestABMCOfASiteSecretTakesNoPasswordOfItsOwn: a registration whose BMC
// names a site secret is written without a password and keeps none of
// its own; a password beside the site secret is refused.
func TestABMCOfASiteSecretTakesNoPasswordOfItsOwn(t *testing.T) {
	ctx := t.Context()
	dir, secretsDir := t.TempDir(), t.TempDir()
	l := &registrar.Local{Dir: dir, SecretsDir: secretsDir}
	r := withBMC("pve1", "52:54:00:00:00:01")
	r.BMC.Secret = "bmc-rack1"
	if _, err := l.RegisterWithBMCPassword(ctx, r, registry.RegisterOptions{}, "own"); !errors.Is(err, registrar.ErrInvalidPassword) {
		t.Errorf("a password beside a site secret = %v, want ErrInvalidPassword", err)
	}
	if _, err := l.Register(ctx, r, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	secrets, _ := folder.OpenSecrets(secretsDir)
	if _, err := os.Lstat(secrets.BMCPasswordPath("pve1")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a BMC password of its own was kept: %v", err)
	}
}
