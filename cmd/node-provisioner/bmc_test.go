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
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/window"
)

const bmcPW = "Bmc-Pa55-word-xyz"

// openWindow records a window held by this process, so boot sees it open.
func openWindow(t *testing.T, state string) {
	t.Helper()
	if err := window.Write(state, &window.Record{PID: os.Getpid(), HTTP: "127.0.0.1:1", Started: time.Now(), Deadline: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
}

// noPasswordOutside fails when the BMC password is in any file of dir
// other than its 0600 one, or in out.
func noPasswordOutside(t *testing.T, dir string, outs ...string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), bmcPW) && !strings.HasSuffix(p, ".bmc.pw") {
			t.Errorf("the BMC password is in %s", p)
		}
		return nil
	})
	for _, o := range outs {
		if strings.Contains(o, bmcPW) {
			t.Errorf("the BMC password is in the output: %s", o)
		}
	}
}

func TestRegisterBMCFlags(t *testing.T) {
	state := t.TempDir()
	pwFile := filepath.Join(t.TempDir(), "bmc.pw")
	os.WriteFile(pwFile, []byte(bmcPW+"\n"), 0o600)
	tests := []struct {
		name string
		args []string
		env  string
		code int
		want string
	}{
		{"no password", []string{"--bmc", "ipmi://10.0.0.5", "--bmc-user", "admin"}, "", 2, "--bmc needs a password"},
		{"no user", []string{"--bmc", "ipmi://10.0.0.5", "--bmc-password-file", pwFile}, "", 2, "--bmc needs --bmc-user"},
		{"user without bmc", []string{"--bmc-user", "admin"}, "", 2, "--bmc-user needs --bmc"},
		{"media TLS without bmc", []string{"--bmc-media-tls"}, "", 2, "--bmc-media-tls needs --bmc"},
		{"suite 0", []string{"--bmc", "ipmi://10.0.0.5", "--bmc-user", "admin", "--bmc-cipher-suite", "0", "--bmc-password-file", pwFile}, "", 2, "no authentication"},
		{"media TLS with IPMI", []string{"--bmc", "ipmi://10.0.0.5", "--bmc-user", "admin", "--bmc-media-tls", "--bmc-password-file", pwFile}, "", 2, "media_tls is for virtual media, which ipmi has not"},
		{"media TLS booting over the network", []string{"--bmc", "redfish://bmc1/1", "--bmc-user", "root", "--bmc-media-tls", "--boot-method", "network", "--bmc-password-file", pwFile}, "", 2, "media_tls is for the virtual-media boot method"},
		{"bad url", []string{"--bmc", "ftp://x", "--bmc-user", "admin", "--bmc-password-file", pwFile}, "", 2, `scheme "ftp"`},
		{"file", []string{"--bmc", "ipmi://10.0.0.5", "--bmc-user", "admin", "--bmc-password-file", pwFile}, "", 0, ""},
		{"env", []string{"--bmc", "redfish://bmc1/1", "--bmc-user", "root", "--bmc-boot-mode", "legacy", "--bmc-media-tls"}, bmcPW, 0, ""},
	}
	for _, tc := range tests {
		t.Setenv(bmcPasswordEnv, tc.env)
		r := np(t, state, append([]string{"register", "pve1", "--mac", "52:54:00:00:00:01", "--boot-disk", "any", "--replace"}, tc.args...)...)
		if r.code != tc.code || !strings.Contains(r.err, tc.want) {
			t.Errorf("%s: exit %d %q; want %d with %q", tc.name, r.code, r.err, tc.code, tc.want)
		}
		noPasswordOutside(t, state, r.stdout, r.err)
	}
	b, _ := os.ReadFile(filepath.Join(state, "registrations", "pve1.json"))
	if !strings.Contains(string(b), `"url": "redfish://bmc1/1"`) || !strings.Contains(string(b), `"media_tls": true`) {
		t.Errorf("registration:\n%s", b)
	}
	fi, err := os.Stat(filepath.Join(state, "secrets", "pve1.bmc.pw"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("password file: %v %v", fi, err)
	}
	// With --server they go to the server (here none), never to the
	// state folder; e2e TestRemoteBMC runs them through a daemon.
	t.Setenv("NODE_PROVISIONER_TOKEN", "npt_test")
	for _, cmd := range [][]string{{"boot", "pve1"}, {"power", "on", "pve1"}} {
		if r := np(t, state, append([]string{"--server", "https://127.0.0.1:1"}, cmd...)...); r.code != 1 || !strings.Contains(r.err, "127.0.0.1:1") && !strings.Contains(r.err, "connection refused") {
			t.Errorf("%v with --server: %d %q", cmd, r.code, r.err)
		}
	}
	t.Setenv("NODE_PROVISIONER_TOKEN", "")
	if r := np(t, state, "unregister", "pve1"); r.code != 0 {
		t.Fatalf("unregister: %d %s", r.code, r.err)
	}
	if _, err := os.Stat(filepath.Join(state, "secrets", "pve1.bmc.pw")); !os.IsNotExist(err) {
		t.Errorf("unregister left the BMC password: %v", err)
	}
}

// TestPowerAndBootThroughIPMISim runs power and boot against a real
// ipmi_sim whose chassis is the state hook.
func TestPowerAndBootThroughIPMISim(t *testing.T) {
	hook := bmctest.StateHook(t)
	sim := bmctest.Start(t, hook, "admin", bmcPW)
	state := t.TempDir()
	t.Setenv(bmcPasswordEnv, bmcPW)
	if r := np(t, state, "register", "pve1", "--mac", "52:54:00:00:00:01", "--boot-disk", "any", "--bmc", sim.Endpoint(), "--bmc-user", "admin", "--bmc-boot-mode", "legacy"); r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	t.Setenv(bmcPasswordEnv, "")
	if r := np(t, state, "power", "status", "pve1"); r.code != 0 || r.stdout != "pve1: power off\n" {
		t.Errorf("power status: %d %q %s", r.code, r.stdout, r.err)
	}
	r := np(t, state, "boot", "pve1")
	if r.code != 1 || !strings.Contains(r.err, "window is closed") {
		t.Errorf("boot with the window closed: %d %q", r.code, r.err)
	}
	if bmctest.Read(hook, "hook.log") != "" && strings.Contains(bmctest.Read(hook, "hook.log"), "set") {
		t.Errorf("a refused boot reached the chassis: %s", bmctest.Read(hook, "hook.log"))
	}
	openWindow(t, state)
	r = np(t, state, "boot", "pve1")
	if r.code != 0 || r.stdout != "pve1: next boot PXE (legacy, once) and powered on via ipmi\n" {
		t.Fatalf("boot: %d %q %s", r.code, r.stdout, r.err)
	}
	if got := bmctest.Read(hook, "boots"); got != "pxe" {
		t.Errorf("boots %q; want one PXE boot", got)
	}
	if out, _ := sim.IPMItool(context.Background(), "chassis", "power", "status"); !strings.Contains(out, "is on") {
		t.Errorf("ipmitool: %s", out)
	}
	// On already: a second boot cycles it into PXE again.
	if r := np(t, state, "boot", "pve1"); r.code != 0 || !strings.Contains(r.stdout, "power-cycled") {
		t.Errorf("boot when on: %d %q %s", r.code, r.stdout, r.err)
	}
	// Consumed: refused.
	reg, _ := folder.OpenRegistrations(state, nil)
	if _, err := reg.Consume(context.Background(), "pve1", registry.ConsumeRecord{ClientIP: "10.0.0.9"}); err != nil {
		t.Fatal(err)
	}
	if r := np(t, state, "boot", "pve1"); r.code != 1 || !strings.Contains(r.err, "not pending") {
		t.Errorf("boot of a consumed registration: %d %q", r.code, r.err)
	}
	if r := np(t, state, "power", "off", "pve1"); r.code != 0 || r.stdout != "pve1: power off\n" {
		t.Errorf("power off of a consumed registration: %d %q %s", r.code, r.stdout, r.err)
	}
	evs, _ := folder.ReadEventsFile(folder.EventsPath(state))
	var got []string
	for _, e := range evs {
		got = append(got, string(e.Kind)+" "+e.Node+" "+e.Detail)
	}
	want := "bmc pve1 next boot PXE (legacy, once) via ipmi|bmc pve1 power on via ipmi|bmc pve1 next boot PXE (legacy, once) via ipmi|bmc pve1 power cycle via ipmi|bmc pve1 power off via ipmi"
	if strings.Join(got, "|") != want {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.ReplaceAll(want, "|", "\n"))
	}
	noPasswordOutside(t, state)

	// The wrong password and an absent BMC: exit 1 in the BMC's words.
	os.WriteFile(filepath.Join(state, "secrets", "pve1.bmc.pw"), []byte("wrong\n"), 0o600)
	if r := np(t, state, "power", "status", "pve1"); r.code != 1 || !strings.Contains(r.err, "refused the credentials") {
		t.Errorf("wrong password: %d %q", r.code, r.err)
	} else {
		t.Logf("wrong password: %s", strings.TrimSpace(r.err))
	}
}

// TestBootThroughRedfish: the same boot through the fake Redfish BMC,
// whose power goes through the same hook interface as ipmi_sim's.
func TestBootThroughRedfish(t *testing.T) {
	hook := bmctest.StateHook(t)
	fake := fakeredfish.New(fakeredfish.Config{User: "root", Password: bmcPW, Hook: fakeredfish.CommandHook{hook, "0x20"}})
	srv := httptest.NewTLSServer(fake)
	defer srv.Close()
	sum := sha256.Sum256(srv.Certificate().Raw)
	state := t.TempDir()
	pwFile := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pwFile, []byte(bmcPW), 0o600)
	url := "redfish://" + strings.TrimPrefix(srv.URL, "https://")
	if r := np(t, state, "register", "pve2", "--boot-disk", "any", "--bmc", url, "--bmc-user", "root", "--bmc-password-file", pwFile, "--bmc-fingerprint", hex.EncodeToString(sum[:]), "--bmc-session"); r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	openWindow(t, state)
	if r := np(t, state, "boot", "pve2"); r.code != 0 || r.stdout != "pve2: next boot PXE (uefi, once) and powered on via redfish\n" {
		t.Fatalf("boot: %d %q %s", r.code, r.stdout, r.err)
	}
	if got := bmctest.Read(hook, "boots"); got != "pxe" {
		t.Errorf("boots %q; want one PXE boot", got)
	}
	if r := np(t, state, "power", "status", "pve2"); r.stdout != "pve2: power on\n" {
		t.Errorf("power status: %q %s", r.stdout, r.err)
	}
	if fake.Sessions() != 0 {
		t.Errorf("%d Redfish sessions left open", fake.Sessions())
	}
	noPasswordOutside(t, state)
	// Unreachable: the server gone.
	srv.Close()
	start := time.Now()
	r := np(t, state, "power", "on", "pve2")
	if r.code != 1 || !strings.Contains(r.err, "BMC unreachable") {
		t.Errorf("unreachable: %d %q", r.code, r.err)
	}
	t.Logf("unreachable: %s (%s)", strings.TrimSpace(r.err), time.Since(start).Round(time.Millisecond))
}
