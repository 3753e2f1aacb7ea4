package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// registrationState returns the install state node-provisioner's state
// folder st gives name: pending, consumed or installed.
func registrationState(t *testing.T, st, name string) string {
	t.Helper()
	stores, err := store.Open(t.Context(), st, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stores.Registrations().Get(context.Background(), name); err == nil {
		return "pending"
	}
	return "not pending"
}

// TestReinstallThroughTheBinary: plasma-node reinstall NODE of an
// installed pxe node refuses without a terminal unless --force (exit 1,
// naming --force) and takes a typed "no" as Cancelled (exit 1), changing
// nothing either way; a typed "yes", or --force, re-arms the registration
// in the local state folder (pending again) and prints the step and the
// machine's line as provision --boot does. A node that is not installed
// cannot be re-armed (exit 1, naming it), and a node of a platform whose
// provider cannot reinstall is a usage error (exit 2).
func TestReinstallThroughTheBinary(t *testing.T) {
	dir, st := t.TempDir(), t.TempDir()
	hw := filepath.Join(dir, "hardware.yaml")
	os.WriteFile(hw, []byte("machines:\n  - macs: [\"52:54:00:12:34:56\"]\n    boot_disk: sda\n"), 0o644)
	mustRun(t, dir, "add", "metal", "--provider", "pxe", "--domain", "lab.example")
	mustRun(t, dir, "--provisioner-dir", st, "provision", "metal", "-z", "foundation.cluster.control:pve:1", "--hardware", hw, "--auto-approve")
	installed(t, st, "metal-control-001")
	if got := registrationState(t, st, "metal-control-001"); got != "not pending" {
		t.Fatalf("after the install: %s", got)
	}

	empty, _ := os.Open(os.DevNull)
	defer empty.Close()
	r := runAs(t, empty, "--dir", dir, "--provisioner-dir", st, "reinstall", "metal-control-001")
	if r.code != 1 || !strings.Contains(r.err, "reinstall metal-control-001@metal needs confirmation") || !strings.Contains(r.err, "pass --force or run on a terminal") {
		t.Errorf("reinstall without a terminal: exit %d, stderr %q", r.code, r.err)
	}
	typing, term := openPTY(t)
	typing.WriteString("no\n")
	r = runAs(t, term, "--dir", dir, "--provisioner-dir", st, "reinstall", "metal-control-001")
	if r.code != 1 || !strings.HasSuffix(r.err, plasmanode.PromptReinstall+"Cancelled\n") {
		t.Errorf("declined reinstall: exit %d, stderr %q", r.code, r.err)
	}
	if got := registrationState(t, st, "metal-control-001"); got != "not pending" {
		t.Errorf("after the refusals: %s; want the registration installed still", got)
	}

	typing.WriteString("yes\n")
	r = runAs(t, term, "--dir", dir, "--provisioner-dir", st, "reinstall", "metal-control-001")
	if r.code != 0 || !strings.Contains(r.stdout, "Reinstall metal-control-001@metal: machine 52:54:00:12:34:56 installs again over its boot disk") ||
		!regexp.MustCompile(`metal-control-001\s+started\s+re-armed for one install with a new root password; netboot its machine`).MatchString(r.stdout) ||
		!strings.Contains(r.stdout, "Machine metal-control-001: started") {
		t.Errorf("confirmed reinstall: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
	if got := registrationState(t, st, "metal-control-001"); got != "pending" {
		t.Errorf("after the reinstall: %s; want pending", got)
	}

	// Pending now: nothing installed to re-arm.
	r = runAs(t, empty, "--dir", dir, "--provisioner-dir", st, "reinstall", "metal-control-001", "--force")
	if r.code != 1 || !strings.Contains(r.err, "metal-control-001 could not be started") || !strings.Contains(r.stdout, "Machine metal-control-001: failed") {
		t.Errorf("reinstall of a pending node: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
	installed(t, st, "metal-control-001")
	if r := plasma(t, dir, "--provisioner-dir", st, "reinstall", "metal-control-001", "--force", "-e", "metal"); r.code != 0 || registrationState(t, st, "metal-control-001") != "pending" {
		t.Errorf("reinstall --force: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
	// Data is kept unless --wipe-data, which says so and asks its own question.
	pendingFile := filepath.Join(st, "registrations", "metal-control-001.json")
	if data, err := os.ReadFile(pendingFile); err != nil || strings.Contains(string(data), "wipe_data") {
		t.Errorf("a plain reinstall's registration wipes data (or is unreadable: %v):\n%s", err, data)
	}
	installed(t, st, "metal-control-001")
	typing.WriteString("yes\n")
	r = runAs(t, term, "--dir", dir, "--provisioner-dir", st, "reinstall", "metal-control-001", "--wipe-data")
	if r.code != 0 || !strings.Contains(r.err, plasmanode.PromptReinstallWipe) || !strings.Contains(r.stdout, "its data pools WIPED (created anew)") {
		t.Errorf("reinstall --wipe-data: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
	if data, err := os.ReadFile(pendingFile); err != nil || !strings.Contains(string(data), `"wipe_data": true`) {
		t.Errorf("reinstall --wipe-data's registration does not wipe data (%v):\n%s", err, data)
	}

	mustRun(t, dir, "add", "demo", "--domain", "demo.example")
	mustRun(t, dir, "add", "demo", "--hostname", "server1", "--public-ip", "51.159.0.10")
	if r := plasma(t, dir, "reinstall", "server1", "--force"); r.code != 2 || !strings.Contains(r.err, "reinstall server1@demo: ") {
		t.Errorf("reinstall of a manual node: exit %d %q", r.code, r.err)
	}
}
