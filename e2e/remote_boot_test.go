package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/bmctest"
)

// TestRemoteProvisionBoot is issue 20's "power on, walk away" through
// issue 15's API: plasma-node, on the other host, provisions a pxe
// platform with --boot; the daemon on the site's host registers the
// machine with its BMC (a real ipmi_sim that only the site's host
// reaches) and, asked through the API, sets PXE once and powers it on;
// the machine (off at first) netboots beside dnsmasq, installs and
// reboots into its disk, and provision exits 0 having printed each
// step. A second provision adds a machine whose BMC accepts power on but
// that never boots (it times out) and one whose BMC refuses the
// password (the BMC's words): exit 1 naming both, nothing powered off.
func TestRemoteProvisionBoot(t *testing.T) {
	t.Parallel()
	media := netbootPrereqs(t)
	bmctest.Need(t)
	const mac = "52:54:00:77:11:10"
	l := newLab(t, 11, labOptions{kernelArgs: []string{"emu.reboot"}})
	vm, hook := bmcMachine(t, l, mac)
	sim := bmctest.StartIn(t, l.prov, hook, "admin", bmcPassword)
	deadHook := bmctest.StateHook(t)
	dead := bmctest.StartIn(t, l.prov, deadHook, "admin", bmcPassword)
	dl := startLabDaemon(t, l, media)
	dl.remote(t, dl.tokens["admin"], "enable", "--ttl", "15m")

	proj := filepath.Join(l.dir, "project")
	os.Mkdir(proj, 0o755)
	env := []string{"E2E_BMC_PW=" + bmcPassword, "E2E_BMC_WRONG=not-the-password"}
	pn := func(args ...string) (int, string) {
		t.Helper()
		return dl.onSite(t, dl.tokens["register"], env, "plasma-node", append([]string{"--dir", proj}, args...)...)
	}
	if code, out := pn("add", "metal", "--provider", "pxe", "--domain", "e2e.test"); code != 0 {
		t.Fatalf("add: %d\n%s", code, out)
	}
	plat := filepath.Join(proj, "platforms", "metal", "platform.yaml")
	raw, _ := os.ReadFile(plat)
	os.WriteFile(plat, []byte(strings.Replace(string(raw), "infrastructure:\n",
		fmt.Sprintf("infrastructure:\n  provisioner_url: %s\n  provisioner_fingerprint: %q\n", dl.api, dl.fp), 1)), 0o644)
	hw := filepath.Join(proj, "hardware.yaml")
	machine := func(mac, endpoint, pwEnv string) string {
		return fmt.Sprintf("  - macs: [%q]\n    boot_disk: any\n    bmc:\n      url: %s\n      user: admin\n      password_env: %s\n      boot_mode: legacy\n", mac, endpoint, pwEnv)
	}
	os.WriteFile(hw, []byte("machines:\n"+machine(mac, sim.Endpoint(), "E2E_BMC_PW")+
		machine("52:54:00:77:11:20", dead.Endpoint(), "E2E_BMC_PW")+machine("52:54:00:77:11:30", sim.Endpoint(), "E2E_BMC_WRONG")), 0o644)

	start := time.Now()
	code, out := pn("provision", "metal", "-z", "foundation.cluster.control:pve:1", "--hardware", hw, "--auto-approve", "--boot", "--timeout", "150s")
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("provision --boot: exit %d\n%s", code, out)
	}
	line := fmt.Sprintf("bmc %s: provision --boot to installed %s", t.Name(), took.Round(100*time.Millisecond))
	t.Log(line)
	t.Logf("provision --boot printed:\n%s", out)
	recordTime(line)
	if !strings.Contains(out, "Machine metal-control-001: started > dhcp-offer > script > kernel > answer > installed") {
		t.Errorf("provision did not print the machine's steps in order:\n%s", out)
	}
	if !regexp.MustCompile(`metal-control-001\s+started\s+next boot PXE once \(legacy\), power on via ipmi`).MatchString(out) {
		t.Errorf("provision did not say how the machine was started:\n%s", out)
	}
	if !strings.Contains(out, "Refreshed metal-control-001@metal: installed address ") {
		t.Errorf("provision --wait did not refresh the node file:\n%s", out)
	}
	if node := readFile(filepath.Join(proj, "platforms", "metal", "nodes", "metal-control-001.yaml")); !strings.Contains(node, "installed_ip: 10.77.21.") || !strings.Contains(node, "ssh_host_keys:") {
		t.Errorf("the node file after provision --wait lacks the installed address or host keys:\n%s", node)
	}
	if _, list := pn("list", "metal"); !regexp.MustCompile(`\bmetal-control-001\b.*\binstalled\b`).MatchString(list) {
		t.Errorf("list does not show metal-control-001 installed:\n%s", list)
	}
	if o, err := sim.IPMItool(context.Background(), "chassis", "power", "status"); err != nil || !strings.Contains(o, "Chassis Power is on") {
		t.Errorf("ipmitool power status: %q %v (the installed machine should have rebooted into its disk)", o, err)
	}
	if n := strings.Count(readFile(filepath.Join(vm, "hook.log")), "set power 1"); n != 1 {
		t.Errorf("power on asked %d times; want once", n)
	}

	// plasma-node reinstall: the daemon re-arms the installed machine and
	// its BMC power-cycles it into the installer; plasma-node prints its
	// steps until it is installed again and refreshes its node file with
	// the new host keys.
	before := readFile(filepath.Join(proj, "platforms", "metal", "nodes", "metal-control-001.yaml"))
	start = time.Now()
	code, out = pn("reinstall", "metal-control-001", "--force", "--timeout", "150s")
	took = time.Since(start)
	t.Logf("plasma-node reinstall printed:\n%s", out)
	if code != 0 {
		t.Fatalf("plasma-node reinstall: exit %d\n%s", code, out)
	}
	line = fmt.Sprintf("bmc %s: plasma-node reinstall to installed %s", t.Name(), took.Round(100*time.Millisecond))
	t.Log(line)
	recordTime(line)
	for _, re := range []string{`metal-control-001\s+started\s+re-armed for one install with a new root password; next boot PXE once \(legacy\), power cycle via ipmi`,
		`Machine metal-control-001: started > dhcp-offer > script > kernel > answer > installed`, `Refreshed metal-control-001@metal: installed address 10\.77\.21\.`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("plasma-node reinstall's output lacks %s", re)
		}
	}
	if after := readFile(filepath.Join(proj, "platforms", "metal", "nodes", "metal-control-001.yaml")); after == before || !strings.Contains(after, "ssh_host_keys:") {
		t.Errorf("the node file was not refreshed with the reinstalled machine's host keys:\n%s", after)
	}
	if n := strings.Count(waitSerial(filepath.Join(vm, "serial.log"), "PLASMA-EMU: OK", 2), "PLASMA-EMU: OK"); n != 2 {
		t.Errorf("%d installs in the serial log, want 2", n)
	}

	// Two more: one never boots, one's BMC refuses the password.
	code, out = pn("provision", "metal", "-z", "foundation.cluster.control:pve:3", "--hardware", hw, "--auto-approve", "--boot", "--timeout", "20s")
	t.Logf("the second provision --boot printed:\n%s", out)
	if code != 1 {
		t.Fatalf("provision of a machine that never boots: exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{"metal-control-002 not installed before the timeout; metal-control-003 could not be started: ", "BMC refused the credentials",
		"Machine metal-control-002: started", "Machine metal-control-003: failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("provision output lacks %q:\n%s", want, out)
		}
	}
	if p, boots := bmctest.Read(deadHook, "power"), bmctest.Read(deadHook, "boots"); p != "1" || boots != "pxe" {
		t.Errorf("the machine that never boots: power %q, boots %q; want powered on once into PXE and never off", p, boots)
	}
	// The password: only in the daemon's 0600 file.
	for _, root := range []string{l.dir, proj} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".bmc.pw") && strings.Contains(readFile(p), bmcPassword) && !strings.HasSuffix(p, "lan.conf") {
				t.Errorf("the BMC password is in %s", p)
			}
			return nil
		})
	}
	if strings.Contains(dl.log.String(), bmcPassword) || strings.Contains(out, bmcPassword) {
		t.Error("the BMC password is in the daemon's log or provision's output")
	}
	pw, err := os.Stat(filepath.Join(l.dir, "secrets", "metal-control-001.bmc.pw"))
	if err != nil || pw.Mode().Perm() != 0o600 {
		t.Errorf("the daemon's BMC password file: %v %v", pw, err)
	}
}
