package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/bmctest"
	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// TestReinstallThroughRedfish: reinstall of an installed node asks for
// confirmation (--force without a terminal), refuses a closed window
// before it writes, then re-arms the registration, keeps the old root
// password as the previous one and boots the machine through its BMC.
func TestReinstallThroughRedfish(t *testing.T) {
	hook := bmctest.StateHook(t)
	fake := fakeredfish.New(fakeredfish.Config{User: "root", Password: bmcPW, Hook: fakeredfish.CommandHook{hook, "0x20"}})
	srv := httptest.NewTLSServer(fake)
	defer srv.Close()
	sum := sha256.Sum256(srv.Certificate().Raw)
	dir := t.TempDir()
	pwFile := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pwFile, []byte(bmcPW), 0o600)
	url := "redfish://" + strings.TrimPrefix(srv.URL, "https://")
	if r := np(t, dir, "register", "pve2", "--mac", "52:54:00:00:00:22", "--boot-disk", "any", "--bmc", url, "--bmc-user", "root", "--bmc-password-file", pwFile, "--bmc-fingerprint", hex.EncodeToString(sum[:])); r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	// The machine installed: its registration consumed, its root password kept.
	stores, err := store.Open(t.Context(), dir, store.Options{SecretsDir: filepath.Join(dir, "secrets")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stores.Registrations().Consume(context.Background(), "pve2", registry.ConsumeRecord{Time: time.Now(), ClientIP: "192.0.2.22"}); err != nil {
		t.Fatal(err)
	}
	pwPath := filepath.Join(dir, "secrets", "pve2.pw")
	if err := os.WriteFile(pwPath, []byte("first-root-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	consumed := func() bool {
		t.Helper()
		c, err := stores.Registrations().Consumed(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return len(c) == 1 && c[0].Name == "pve2"
	}

	tests := []struct {
		name     string
		args     []string
		code     int
		stderr   string
		consumed bool
	}{
		{"no terminal, no --force", []string{"reinstall", "pve2"}, 2, "node-provisioner: reinstall pve2 needs confirmation: run it at a terminal, or give --force\n", true},
		{"the window closed", []string{"reinstall", "pve2", "--force"}, 1, "the provisioning window is closed", true},
		{"an unknown node", []string{"reinstall", "nosuch", "--force"}, 2, "nosuch", true},
		{"a bad name", []string{"reinstall", "../x", "--force"}, 2, "../x", true},
	}
	for _, tt := range tests {
		r := np(t, dir, tt.args...)
		if r.code != tt.code || !strings.Contains(r.err, tt.stderr) || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d and %q", tt.name, r.code, r.stdout, r.err, tt.code, tt.stderr)
		}
		if got := consumed(); got != tt.consumed {
			t.Errorf("%s: consumed %v after it, want %v", tt.name, got, tt.consumed)
		}
	}
	if got := bmctest.Read(hook, "boots"); got != "" {
		t.Errorf("the refusals booted %q; want nothing", got)
	}

	openWindow(t, dir)
	r := np(t, dir, "reinstall", "pve2", "--force")
	if r.code != 0 || r.stdout != "pve2: re-armed for one install with a new root password; next boot PXE (uefi, once) and powered on via redfish\n" {
		t.Fatalf("reinstall: %d %q %s", r.code, r.stdout, r.err)
	}
	if consumed() {
		t.Error("after reinstall the registration is still consumed, want it pending")
	}
	if got := bmctest.Read(hook, "boots"); got != "pxe" {
		t.Errorf("boots %q; want one PXE boot", got)
	}
	prev, err := os.ReadFile(filepath.Join(dir, "secrets", "pve2.previous.pw"))
	if err != nil || string(prev) != "first-root-password\n" {
		t.Errorf("previous password = %q, %v; want the first install's", prev, err)
	}
	if r := np(t, dir, "list"); r.code != 0 || !strings.Contains(r.stdout, "pending") {
		t.Errorf("list after reinstall: %d %q %s", r.code, r.stdout, r.err)
	}
	if r := np(t, dir, "reinstall", "pve2", "--force"); r.code != 2 {
		t.Errorf("a second reinstall of the now pending pve2: %d %q %s, want 2", r.code, r.stdout, r.err)
	}
	noPasswordOutside(t, dir, r.stdout, r.err)
}
