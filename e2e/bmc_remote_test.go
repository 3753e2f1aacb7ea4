package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/bmctest"
	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestRemoteBMC: register --bmc, power and boot with --server, through a
// node-provisioner daemon process whose machines' BMCs are a real
// ipmi_sim and the fake Redfish BMC. The same output and exit codes as
// on the provisioner's host; the refusals in the server's (or the BMC's)
// words; the BMC password only in its 0600 file in the daemon's secrets
// folder: not in the registration, the daemon's log or any process's
// arguments.
func TestRemoteBMC(t *testing.T) {
	bmctest.Need(t)
	hook := bmctest.StateHook(t)
	sim := bmctest.Start(t, hook, "admin", bmcPassword)
	rfHook := bmctest.StateHook(t)
	fake := fakeredfish.New(fakeredfish.Config{User: "root", Password: bmcPassword, Hook: fakeredfish.CommandHook{rfHook, "0x20"}})
	rf := httptest.NewTLSServer(fake)
	defer rf.Close()
	rfSum := sha256.Sum256(rf.Certificate().Raw)

	state, local := t.TempDir(), t.TempDir()
	secrets := filepath.Join(state, "secrets")
	admin := npOut(t, state, "token", "create", "ops", "--scope", "admin")
	reg := npOut(t, state, "token", "create", "ci", "--scope", "register")
	read := npOut(t, state, "token", "create", "watch", "--scope", "read")
	fp := npOut(t, state, "tls", "fingerprint")
	addr := freeAddr(t)
	c, err := client.New(client.Options{URL: "https://" + addr, Token: read, Fingerprint: fp, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	daemonLog := &lockedBuffer{}
	d := exec.Command(filepath.Join(bin, "node-provisioner"), "--state-dir", state, "--secrets-dir", secrets,
		"-v", "daemon", "--api", addr, "--http", "127.0.0.1:0")
	d.Env = append(os.Environ(), "HOME="+state)
	d.Stdout, d.Stderr = daemonLog, daemonLog
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			d.Process.Signal(os.Interrupt)
			d.Wait()
		}
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for c.Health(ctx) != nil {
		if ctx.Err() != nil {
			t.Fatalf("the daemon did not answer:\n%s", daemonLog)
		}
		time.Sleep(50 * time.Millisecond)
	}

	pwFile := filepath.Join(t.TempDir(), "bmc.pw")
	if err := os.WriteFile(pwFile, []byte(bmcPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var args [][]string
	remote := func(token string, env []string, a ...string) (int, string, string) {
		t.Helper()
		full := append([]string{"--state-dir", local, "--secrets-dir", filepath.Join(local, "secrets"), "--server", "https://" + addr, "--fingerprint", fp}, a...)
		args = append(args, full)
		cmd := exec.Command(filepath.Join(bin, "node-provisioner"), full...)
		cmd.Env = append(append(os.Environ(), "HOME="+local, "NODE_PROVISIONER_TOKEN="+token, "NODE_PROVISIONER_BMC_PASSWORD="), env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	bmcArgs := []string{"--bmc", sim.Endpoint(), "--bmc-user", "admin", "--bmc-boot-mode", "legacy"}
	redfish := []string{"--bmc", "redfish://" + strings.TrimPrefix(rf.URL, "https://"), "--bmc-user", "root", "--bmc-fingerprint", hex.EncodeToString(rfSum[:])}
	// ipmi_sim powers a cycled chassis on again a moment after the off.
	poweredOn := func() {
		for end := time.Now().Add(10 * time.Second); bmctest.Read(hook, "power") != "1" && time.Now().Before(end); {
			time.Sleep(50 * time.Millisecond)
		}
	}
	// consume gives name's answer away, as the window does when its
	// installer asks (the daemon reads the registrations from disk).
	consume := func(name string) func() {
		return func() {
			r, err := folder.OpenRegistrations(state, nil)
			if err == nil {
				_, err = r.Consume(context.Background(), name, registry.ConsumeRecord{ClientIP: "10.0.0.9"})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := []struct {
		what   string
		token  string
		env    []string
		args   []string
		code   int
		stdout string // exact unless empty
		stderr string // contained (the whole of it when it ends in a newline)
		then   func()
	}{
		{"a read token may not register", read, nil, append([]string{"register", "pve1", "--mac", "52:54:00:00:20:01", "--boot-disk", "any", "--bmc-password-file", pwFile}, bmcArgs...), 1, "", "needs register", nil},
		{"no password", reg, nil, append([]string{"register", "pve1", "--boot-disk", "any"}, bmcArgs...), 2, "", "--bmc needs a password: --bmc-password-file FILE or env NODE_PROVISIONER_BMC_PASSWORD", nil},
		{"register with the BMC", reg, nil, append([]string{"register", "pve1", "--mac", "52:54:00:00:20:01", "--boot-disk", "any", "--bmc-password-file", pwFile}, bmcArgs...), 0, "Registered pve1: boot disk any\n", "", nil},
		{"status", reg, nil, []string{"power", "status", "pve1"}, 0, "pve1: power off\n", "", nil},
		{"status with a read token", read, nil, []string{"power", "status", "pve1"}, 0, "pve1: power off\n", "", nil},
		{"on with a read token", read, nil, []string{"power", "on", "pve1"}, 1, "", "403 Forbidden", nil},
		{"boot with the window closed", reg, nil, []string{"boot", "pve1"}, 1, "", "node-provisioner: boot pve1: boot refused: the provisioning window is closed (open it first)\n", nil},
		{"open the window", admin, nil, []string{"enable", "--ttl", "10m"}, 0, "", "", nil},
		{"boot", reg, nil, []string{"boot", "pve1"}, 0, "pve1: next boot PXE (legacy, once) and powered on via ipmi\n", "", nil},
		{"status after boot", read, nil, []string{"power", "status", "pve1"}, 0, "pve1: power on\n", "", nil},
		{"boot again: cycled", reg, nil, []string{"boot", "pve1"}, 0, "pve1: next boot PXE (legacy, once) and power-cycled via ipmi\n", "", poweredOn},
		{"off", reg, nil, []string{"power", "off", "pve1"}, 0, "pve1: power off\n", "", nil},
		{"on", reg, nil, []string{"power", "on", "pve1"}, 0, "pve1: power on\n", "", nil},
		{"unknown machine", reg, nil, []string{"power", "status", "nope"}, 1, "", `no pending registration`, nil},
		{"unknown machine's boot", reg, nil, []string{"boot", "nope"}, 1, "", `no pending registration`, nil},
		{"a bad action", reg, nil, []string{"power", "reset", "pve1"}, 2, "", `power "reset": want status, on, off or cycle`, nil},
		{"register without a BMC", reg, nil, []string{"register", "pve2", "--boot-disk", "any"}, 0, "Registered pve2: boot disk any; pins nothing, so it only answers while it is the only pending registration\n", "", nil},
		{"no BMC", reg, nil, []string{"power", "on", "pve2"}, 1, "", "node-provisioner: pve2: no BMC registered (register it with its BMC)\n", nil},
		{"no BMC to boot", reg, nil, []string{"boot", "pve2"}, 1, "", "no BMC registered", nil},
		{"the wrong password, from the environment", reg, []string{"NODE_PROVISIONER_BMC_PASSWORD=Not-The-Password"}, append([]string{"register", "pve3", "--mac", "52:54:00:00:20:03", "--boot-disk", "any"}, bmcArgs...), 0, "Registered pve3: boot disk any\n", "", nil},
		{"the wrong password: the BMC's words", reg, nil, []string{"power", "status", "pve3"}, 1, "", "node-provisioner: pve3: power status: BMC refused the credentials", nil},
		{"the wrong password: boot", reg, nil, []string{"boot", "pve3"}, 1, "", "node-provisioner: pve3: power status: BMC refused the credentials", nil},
		{"redfish", reg, []string{"NODE_PROVISIONER_BMC_PASSWORD=" + bmcPassword}, append([]string{"register", "pve4", "--mac", "52:54:00:00:20:04", "--boot-disk", "any"}, redfish...), 0, "Registered pve4: boot disk any\n", "", nil},
		{"redfish boot", reg, nil, []string{"boot", "pve4"}, 0, "pve4: next boot PXE (uefi, once) and powered on via redfish\n", "", nil},
		{"redfish status", read, nil, []string{"power", "status", "pve4"}, 0, "pve4: power on\n", "", consume("pve4")},
		{"boot of a consumed registration", reg, nil, []string{"boot", "pve4"}, 1, "", "node-provisioner: boot pve4: boot refused: the registration is consumed (its answer was served), not pending; re-register or rearm it to install this machine again\n", nil},
		{"power of a consumed registration", reg, nil, []string{"power", "off", "pve4"}, 0, "pve4: power off\n", "", nil},
		{"close the window", admin, nil, []string{"disable"}, 0, "", "", nil},
		{"boot with the window closed again", reg, nil, []string{"boot", "pve4"}, 1, "", "the provisioning window is closed", nil},
	}
	for _, s := range steps {
		code, out, errOut := remote(s.token, s.env, s.args...)
		if s.then != nil {
			s.then()
		}
		if code != s.code || (s.stdout != "" && out != s.stdout) || !strings.Contains(errOut, s.stderr) || strings.HasSuffix(s.stderr, "\n") && errOut != s.stderr {
			t.Errorf("%s: node-provisioner %s: exit %d (want %d)\nstdout: %q (want %q)\nstderr: %s(want %q)", s.what, strings.Join(s.args, " "), code, s.code, out, s.stdout, errOut, s.stderr)
		} else if s.code != 0 {
			t.Logf("%s: %s", s.what, strings.TrimSpace(errOut))
		}
		if strings.Contains(out+errOut, bmcPassword) || strings.Contains(out+errOut, "Not-The-Password") {
			t.Errorf("%s printed the BMC password", s.what)
		}
	}

	// The chassis: PXE once per boot, and power on, as ipmitool sees it.
	if got := bmctest.Read(hook, "boots"); got != "pxe\npxe\nnone" {
		t.Errorf("ipmi_sim's boots %q; want two PXE boots, then a plain power-on\n%s", got, bmctest.Read(hook, "hook.log"))
	}
	if out, _ := sim.IPMItool(context.Background(), "chassis", "power", "status"); !strings.Contains(out, "is on") {
		t.Errorf("ipmitool: %s", out)
	}
	if got := bmctest.Read(rfHook, "boots"); got != "pxe" || bmctest.Read(rfHook, "power") != "0" {
		t.Errorf("the Redfish BMC's boots %q; want one PXE boot", got)
	}

	// The password: 0600 in the daemon's secrets folder, nowhere else.
	for _, n := range []string{"pve1", "pve4"} {
		p := filepath.Join(secrets, n+".bmc.pw")
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v; want a 0600 file", p, fi, err)
		} else if b, _ := os.ReadFile(p); strings.TrimSpace(string(b)) != bmcPassword {
			t.Errorf("%s does not hold the password", p)
		}
	}
	if fi, err := os.Stat(secrets); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("secrets folder: %v %v; want 0700", fi, err)
	}
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(d.Process.Pid) + "/cmdline")
	if len(cmdline) == 0 || bytes.Contains(cmdline, []byte(bmcPassword)) {
		t.Errorf("the daemon's arguments: %q", cmdline)
	}
	for _, a := range args {
		if strings.Contains(strings.Join(a, " "), bmcPassword) {
			t.Errorf("a client's arguments hold the password: %v", a)
		}
	}
	stop()
	logs := daemonLog.String()
	if !strings.Contains(logs, "api: boot") {
		t.Errorf("the daemon's log does not show the boots:\n%s", logs)
	}
	filepath.WalkDir(state, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || strings.HasSuffix(p, ".bmc.pw") {
			return nil
		}
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(bmcPassword)) || bytes.Contains(b, []byte("Not-The-Password")) {
			t.Errorf("the BMC password is in %s", p)
		}
		return nil
	})
	for _, s := range []string{bmcPassword, "Not-The-Password", reg, admin, read} {
		if strings.Contains(logs, s) {
			t.Errorf("the daemon's log holds a secret")
		}
	}
	if b, err := os.ReadFile(filepath.Join(state, "registrations", "pve1.json")); err != nil || !strings.Contains(string(b), sim.Endpoint()) {
		t.Errorf("pve1's registration does not name its BMC: %v\n%s", err, b)
	}
	if ents, _ := os.ReadDir(filepath.Join(local, "registrations")); len(ents) != 0 {
		t.Errorf("remote mode wrote registrations locally: %v", ents)
	}
	if _, err := os.Stat(filepath.Join(local, "secrets")); !os.IsNotExist(err) {
		t.Errorf("remote mode made a local secrets folder: %v", err)
	}
}
