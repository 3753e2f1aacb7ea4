package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/bmctest"
	"github.com/plasmactl/plasma-node/internal/fakeredfish"
)

// bmcPassword is the simulated BMC's password; it must show up nowhere
// but in its 0600 file (and ipmi_sim's own configuration).
const bmcPassword = "E2e-Bmc-Secret-42"

// bmcBootPassword is TestBMCBoot's own BMC password: that test watches
// every process's command line for it while other tests run beside it,
// so no other test may use it. At most 20 bytes (IPMI 2.0).
const bmcBootPassword = "E2e-Bmc-Boot-Pw-44"

// vmHook is ipmi_sim's chassis_control hook (recipe B of the BMC
// reference) for one machine of the netboot lab: power on starts QEMU on
// a tap of the lab's bridge, with -boot once=n when a PXE boot is
// pending (SeaBIOS, legacy), so the next boot after it is from the disk,
// and the virtual CD's kernel when a boot from it is pending.
const vmHook = `#!/bin/bash
W=%[1]s; PIDF=$W/vm.pid BOOTF=$W/bootdev
echo "$(date +%%T.%%N) $*" >> "$W/hook.log"
alive() { s=$(ps -o stat= -p "$1" 2>/dev/null); [ -n "$s" ] && [ "${s#Z}" = "$s" ]; }
running() { [ -s "$PIDF" ] && alive "$(cat "$PIDF")"; }
start() {
  boot=$(cat "$BOOTF" 2>/dev/null || echo none); echo none > "$BOOTF"
  A=(netns exec %[2]s qemu-system-x86_64 -accel tcg -cpu max -m 512 -smp 1 -nographic -monitor none
     -chardev file,id=s0,path="$W/serial.log",append=on -serial chardev:s0 -machine pc
     -smbios type=1,serial=E2E-BMC1 -uuid e2e00000-0000-4000-8000-%[5]s
     -netdev tap,id=n0,ifname=%[3]s,script=no,downscript=no -device virtio-net-pci,netdev=n0,mac=%[4]s
     -drive file="$W/disk.img",format=raw,if=none,id=d0 -device virtio-blk-pci,drive=d0)
  [ "$boot" = pxe ] && A+=(-boot once=n)
  # The BMC's virtual CD (vmedia_test.go's cdHook lays it out): the
  # downloaded ISO in the CD drive, which the firmware boots once (El
  # Torito, ISOLINUX); the installer's kernel has no CD drivers, so it
  # reads the same bytes through a read-only virtio disk.
  [ "$boot" = cd ] && A+=(-drive file="$W/cd.iso",format=raw,media=cdrom,readonly=on -boot once=d
     -drive file="$W/cd.iso",format=raw,if=none,id=cd0,readonly=on -device virtio-blk-pci,drive=cd0)
  echo "=== power-on $(date +%%T.%%N) bootdev=$boot" >> "$W/serial.log"
  ip "${A[@]}" </dev/null >>"$W/qemu.log" 2>&1 &
  echo $! > "$PIDF"
}
stop() { running || return 0; p=$(cat "$PIDF"); kill "$p"
         for _ in $(seq 30); do alive "$p" || break; sleep 0.1; done; alive "$p" && kill -9 "$p"; rm -f "$PIDF"; }
op=$2; shift 2
case $op in
  get) for p; do case $p in power) running && echo power:1 || echo power:0 ;;
                 boot) echo "boot:$(cat "$BOOTF" 2>/dev/null || echo none)" ;; *) exit 1 ;; esac; done ;;
  set) while [ $# -ge 2 ]; do case $1 in
         power) if [ "$2" = 1 ]; then running || start; else stop; fi ;;
         reset) if running; then stop; start; fi ;;
         shutdown) stop ;;
         boot) echo "$2" > "$BOOTF" ;;
         identify) ;; *) exit 1 ;; esac; shift 2; done ;;
  *) exit 1 ;;
esac
exit 0
`

// diskMBR is an "installed" disk's boot sector: it prints DISK-BOOT-OK
// and halts (from the BMC reference).
var diskMBR = []byte("\xfb\x31\xc0\x8e\xd8\xfc\x31\xdb\xbe\x19\x7c\xac\x08\xc0\x74\x06\xb4\x0e\xcd\x10\xeb\xf5\xf4\xeb\xfd\r\nDISK-BOOT-OK\r\n")

// npRun runs node-provisioner in the lab's state and returns its exit
// code, stdout and stderr.
func (l *bootLab) npRun(args ...string) (int, string, string) {
	return l.npRunIn("", args...)
}

// npRunIn is npRun in network namespace ns ("": the test's own).
func (l *bootLab) npRunIn(ns string, args ...string) (int, string, string) {
	c := exec.Command(filepath.Join(bin, "node-provisioner"), append([]string{"--state-dir", l.state, "--secrets-dir", filepath.Join(l.dir, "secrets")}, args...)...)
	if ns != "" {
		c = exec.Command("ip", append([]string{"netns", "exec", ns}, c.Args...)...)
	}
	c.Env = l.env
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return code, out.String(), errb.String()
}

// TestBMCBoot: a QEMU machine of the netboot lab, off, behind a real
// IPMI BMC (ipmi_sim with the recipe-B hook). node-provisioner boot sets
// its next boot to PXE and powers it on; it netboots beside dnsmasq, gets
// its answer and reports installed, then reboots from its disk and stays
// on. A second boot is refused; a wrong password and an absent BMC are
// clear errors; the password is in no other file, log or process.
func TestBMCBoot(t *testing.T) {
	t.Parallel() // its lab (7) and its BMC password are its own
	media := netbootPrereqs(t)
	bmctest.Need(t)
	const mac = "52:54:00:77:07:10"
	l := newLab(t, 7, labOptions{kernelArgs: []string{"emu.reboot"}})
	vm, hook := bmcMachine(t, l, mac)
	sim := bmctest.Start(t, hook, "admin", bmcBootPassword)

	pwFile := filepath.Join(t.TempDir(), "bmc-password")
	os.WriteFile(pwFile, []byte(bmcBootPassword+"\n"), 0o600)
	l.register(t, "bmc1", mac, "--bmc", sim.Endpoint(), "--bmc-user", "admin", "--bmc-password-file", pwFile, "--bmc-boot-mode", "legacy")
	if code, out, errs := l.npRun("power", "status", "bmc1"); code != 0 || out != "bmc1: power off\n" {
		t.Fatalf("power status before: %d %q %s", code, out, errs)
	}
	if code, _, errs := l.npRun("boot", "bmc1"); code != 1 || !strings.Contains(errs, "window is closed") {
		t.Errorf("boot before the window opens: %d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(vm, "vm.pid")); err == nil {
		t.Fatal("a boot refused for a closed window started the machine")
	}
	l.serve(t, media)

	// Watch every process's arguments while boot runs.
	stop := make(chan struct{})
	seen := make(chan string, 1)
	go func() { seen <- watchArgs(stop, bmcBootPassword) }()
	start := time.Now()
	code, out, errs := l.npRun("boot", "bmc1")
	bootTook := time.Since(start)
	if code != 0 || out != "bmc1: next boot PXE (legacy, once) and powered on via ipmi\n" {
		t.Fatalf("boot: %d %q %s", code, out, errs)
	}
	installed := waitEvent(t, l, "installed", "bmc1", 150*time.Second)
	close(stop)
	if p := <-seen; p != "" {
		t.Errorf("the BMC password is in a process's arguments: %s", p)
	}
	if installed == 0 {
		t.Fatalf("bmc1 did not report installed within 150 s")
	}
	line := fmt.Sprintf("bmc %s: boot command %s, power-on to installed %s", t.Name(), bootTook.Round(time.Millisecond), installed.Round(100*time.Millisecond))
	t.Log(line)
	recordTime(line)
	serial := []byte(waitSerial(filepath.Join(vm, "serial.log"), "PLASMA-EMU: OK", 1))
	if !markerRE.Match(serial) || !strings.Contains(string(serial), "PLASMA-EMU: OK") {
		t.Errorf("the serial log has no OK marker")
	}
	if n := strings.Count(string(serial), "=== power-on"); n != 1 || !strings.Contains(string(serial), "bootdev=pxe") {
		t.Errorf("%d power-ons (want 1, with bootdev=pxe)", n)
	}
	l.wantEvent(t, "bmc", "next boot PXE (legacy, once) via ipmi")
	l.wantEvent(t, "bmc", "power on via ipmi")

	// The installer rebooted it; it boots its disk and stays on.
	time.Sleep(3 * time.Second)
	if code, out, errs := l.npRun("power", "status", "bmc1"); code != 0 || out != "bmc1: power on\n" {
		t.Errorf("power status after: %d %q %s", code, out, errs)
	}
	if o, err := sim.IPMItool(context.Background(), "chassis", "power", "status"); err != nil || !strings.Contains(o, "Chassis Power is on") {
		t.Errorf("ipmitool power status: %q %v", o, err)
	}
	code, _, errs = l.npRun("boot", "bmc1")
	if code != 1 || !strings.Contains(errs, "installed, not pending") {
		t.Errorf("a second boot: %d %s; want exit 1, refused as installed", code, errs)
	}
	if strings.Count(readFile(filepath.Join(vm, "hook.log")), "set power 1") != 1 {
		t.Errorf("power-on asked more than once:\n%s", readFile(filepath.Join(vm, "hook.log")))
	}
	bmcReinstall(t, l, vm, "bmc1", mac)

	// A wrong password and an absent BMC: exit 1, the node and the BMC's words.
	wrong := filepath.Join(t.TempDir(), "wrong")
	os.WriteFile(wrong, []byte("not-the-password\n"), 0o600)
	l.register(t, "bmc2", "52:54:00:77:07:20", "--bmc", sim.Endpoint(), "--bmc-user", "admin", "--bmc-password-file", wrong)
	l.register(t, "bmc3", "52:54:00:77:07:30", "--bmc", fmt.Sprintf("ipmi://127.0.0.1:%d", bmctest.FreeUDPPort(t)), "--bmc-user", "admin", "--bmc-password-file", pwFile)
	for _, tc := range []struct{ node, want string }{{"bmc2", "bmc2: power status: BMC refused the credentials"}, {"bmc3", "bmc3: power status: BMC unreachable"}} {
		start := time.Now()
		code, _, errs := l.npRun("boot", tc.node)
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("boot %s: %d %q; want exit 1 with %q", tc.node, code, errs, tc.want)
		}
		t.Logf("boot %s: %s (%s)", tc.node, strings.TrimSpace(errs), time.Since(start).Round(time.Millisecond))
	}
	// Nowhere but its own file: state, secrets, serve's log.
	filepath.WalkDir(l.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".bmc.pw") && strings.Contains(readFile(p), bmcBootPassword) {
			t.Errorf("the BMC password is in %s", p)
		}
		return nil
	})
	if strings.Contains(l.serveLog.String(), bmcBootPassword) {
		t.Error("the BMC password is in serve's log")
	}
}

// TestBMCBootRedfish: the same boot through a Redfish BMC, the fake of
// internal/fakeredfish over TLS (pinned, a session, the ETag sent back
// as If-Match), whose power goes through the same hook as ipmi_sim's, so
// the Redfish path too ends in a real network boot and install.
func TestBMCBootRedfish(t *testing.T) {
	t.Parallel()
	media := netbootPrereqs(t)
	bmctest.Need(t)
	const mac = "52:54:00:77:08:10"
	l := newLab(t, 8, labOptions{kernelArgs: []string{"emu.reboot"}})
	vm, hook := bmcMachine(t, l, mac)
	fake := fakeredfish.New(fakeredfish.Config{User: "root", Password: bmcPassword, SystemIDs: []string{"System.Embedded.1"}, Hook: fakeredfish.CommandHook{hook, "0x20"}})
	srv := httptest.NewTLSServer(fake)
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(srv.Certificate().Raw)
	pwFile := filepath.Join(t.TempDir(), "bmc-password")
	os.WriteFile(pwFile, []byte(bmcPassword+"\n"), 0o600)
	l.register(t, "rf1", mac, "--bmc", "redfish://"+strings.TrimPrefix(srv.URL, "https://")+"/System.Embedded.1", "--bmc-user", "root",
		"--bmc-password-file", pwFile, "--bmc-fingerprint", hex.EncodeToString(sum[:]), "--bmc-session", "--bmc-boot-mode", "legacy")
	l.serve(t, media)
	start := time.Now()
	code, out, errs := l.npRun("boot", "rf1")
	bootTook := time.Since(start)
	if code != 0 || out != "rf1: next boot PXE (legacy, once) and powered on via redfish\n" {
		t.Fatalf("boot: %d %q %s", code, out, errs)
	}
	installed := waitEvent(t, l, "installed", "rf1", 150*time.Second)
	if installed == 0 {
		t.Fatalf("rf1 did not report installed within 150 s")
	}
	line := fmt.Sprintf("bmc %s: boot command %s, power-on to installed %s", t.Name(), bootTook.Round(time.Millisecond), installed.Round(100*time.Millisecond))
	t.Log(line)
	recordTime(line)
	if !strings.Contains(waitSerial(filepath.Join(vm, "serial.log"), "PLASMA-EMU: OK fqdn=rf1.", 1), "PLASMA-EMU: OK fqdn=rf1.") {
		t.Errorf("the serial log has no OK marker for rf1")
	}
	time.Sleep(3 * time.Second)
	if code, out, errs := l.npRun("power", "status", "rf1"); code != 0 || out != "rf1: power on\n" {
		t.Errorf("power status after: %d %q %s", code, out, errs)
	}
	if code, _, errs := l.npRun("boot", "rf1"); code != 1 || !strings.Contains(errs, "installed, not pending") {
		t.Errorf("a second boot: %d %s; want exit 1, refused as installed", code, errs)
	}
	calls := strings.Join(fake.Calls(), "\n")
	for _, want := range []string{"POST /redfish/v1/SessionService/Sessions 201", "PATCH /redfish/v1/Systems/System.Embedded.1 204", "POST /redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset 204"} {
		if !strings.Contains(calls, want) {
			t.Errorf("the fake did not serve %q:\n%s", want, calls)
		}
	}
	if fake.Sessions() != 0 {
		t.Errorf("%d Redfish sessions left open", fake.Sessions())
	}
	l.wantEvent(t, "bmc", "power on via redfish")
	filepath.WalkDir(l.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".bmc.pw") && strings.Contains(readFile(p), bmcPassword) {
			t.Errorf("the BMC password is in %s", p)
		}
		return nil
	})
}

// bmcMachine makes a machine of the lab that the hook vm.sh powers: a
// tap on the lab's bridge, an "installed" disk, and the hook, which
// ipmi_sim or the Redfish fake calls. The machine is killed when the test
// ends. It returns the machine's folder and the hook.
func bmcMachine(t *testing.T, l *bootLab, mac string) (string, string) {
	t.Helper()
	// The BMC powers the machine on and off, so it holds a QEMU slot
	// from here to the test's end, as bootAll's machines do while they run.
	// A test that calls it must not also wait for a slot (bootAll, l.boot,
	// or a second bmcMachine in the same test): holding one slot while
	// waiting for another can deadlock against a test that does the same.
	if err := qemuSlots.Acquire(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qemuSlots.Release(1) })
	l.taps++
	tap := fmt.Sprintf("pnnb%dt%d", l.n, l.taps)
	run(t, "ip", "-n", l.site, "tuntap", "add", "dev", tap, "mode", "tap")
	run(t, "ip", "-n", l.site, "link", "set", tap, "master", "br0", "up")
	vm := filepath.Join(l.dir, "vm-"+strings.ReplaceAll(mac, ":", ""))
	os.MkdirAll(vm, 0o755)
	disk := append(append([]byte{}, diskMBR...), make([]byte, 510-len(diskMBR))...)
	disk = append(disk, 0x55, 0xaa)
	disk = append(disk, make([]byte, 1<<20-512)...)
	os.WriteFile(filepath.Join(vm, "disk.img"), disk, 0o644)
	hook := filepath.Join(vm, "vm.sh")
	os.WriteFile(hook, []byte(fmt.Sprintf(vmHook, vm, l.site, tap, mac, strings.ReplaceAll(mac, ":", ""))), 0o755)
	t.Cleanup(func() { // power off what the test powered on
		if b, err := os.ReadFile(filepath.Join(vm, "vm.pid")); err == nil {
			var pid int
			fmt.Sscan(string(b), &pid)
			if pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if t.Failed() {
			for _, f := range []string{"hook.log", "qemu.log", "serial.log"} {
				t.Logf("%s:\n%s", f, readFile(filepath.Join(vm, f)))
			}
		}
	})
	return vm, hook
}

// waitEvent waits for an event of kind mentioning s and returns how long
// it took, 0 when it did not come within limit.
func waitEvent(t *testing.T, l *bootLab, kind, s string, limit time.Duration) time.Duration {
	start := time.Now()
	for time.Since(start) < limit {
		for _, e := range l.events(t) {
			if e["kind"] == kind && fmt.Sprint(e["node"]) == s {
				return time.Since(start)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return 0
}

// watchArgs reads every process's command line until stop and returns
// one that holds secret, or "".
func watchArgs(stop <-chan struct{}, secret string) string {
	for {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
				return strings.ReplaceAll(string(b), "\x00", " ")
			}
		}
		select {
		case <-stop:
			return ""
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// bmcReinstall reinstalls the installed, powered-on node through its BMC
// (node-provisioner reinstall): the machine is power-cycled into a PXE
// boot, gets the installer again, is answered with a new root password
// (the old one kept as the previous until the install reports in),
// installs, and its script is the installed machine's exit again.
func bmcReinstall(t *testing.T, l *bootLab, vm, node, mac string) {
	t.Helper()
	secrets := filepath.Join(l.dir, "secrets")
	first := readFile(filepath.Join(secrets, node+".pw"))
	if first == "" {
		t.Fatalf("no root password of %s after its install", node)
	}
	script := "http://" + l.serverIP() + ":8090/boot.ipxe?mac=" + mac
	if got := l.get(t, script); !strings.Contains(got, "exit") {
		t.Fatalf("the installed machine's script is not its exit:\n%s", got)
	}
	if code, _, errs := l.npRun("reinstall", node); code != 2 || !strings.Contains(errs, "--force") {
		t.Errorf("reinstall without a terminal or --force: %d %s; want exit 2 naming --force", code, errs)
	}
	start := time.Now()
	code, out, errs := l.npRun("reinstall", node, "--force")
	if code != 0 || out != node+": re-armed for one install with a new root password; next boot PXE (legacy, once) and power-cycled via ipmi\n" {
		t.Fatalf("reinstall: %d %q %s", code, out, errs)
	}
	deadline := time.Now().Add(150 * time.Second)
	serial := waitSerialFor(filepath.Join(vm, "serial.log"), "PLASMA-EMU: OK", 2, 150*time.Second)
	if n := strings.Count(serial, "PLASMA-EMU: OK"); n != 2 {
		t.Fatalf("%d installs in the serial log after reinstall, want 2", n)
	}
	if n := strings.Count(serial, "bootdev=pxe"); n != 2 {
		t.Errorf("%d PXE power-ons, want 2 (the boot and the reinstall)", n)
	}
	for time.Now().Before(deadline) {
		if n := strings.Count(l.eventsOf(t, "installed", node), "\n"); n >= 2 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	took := time.Since(start)
	line := fmt.Sprintf("bmc %s: reinstall command to installed %s", t.Name(), took.Round(100*time.Millisecond))
	t.Log(line)
	recordTime(line)
	second := readFile(filepath.Join(secrets, node+".pw"))
	if second == "" || second == first {
		t.Errorf("the reinstall's root password is the first install's (or none), want a new one")
	}
	if _, err := os.Stat(filepath.Join(secrets, node+".previous.pw")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the previous root password is kept after the reinstall reported in: %v", err)
	}
	if got := l.get(t, script); !strings.Contains(got, "exit") {
		t.Errorf("after the reinstall the machine's script is not its exit again:\n%s", got)
	}
	if code, _, errs := l.npRun("boot", node); code != 1 || !strings.Contains(errs, "installed, not pending") {
		t.Errorf("a boot after the reinstall: %d %s; want exit 1, refused as installed", code, errs)
	}
}

// eventsOf returns one line per event of kind naming s.
func (l *bootLab) eventsOf(t *testing.T, kind, s string) string {
	var b strings.Builder
	for _, e := range l.events(t) {
		if e["kind"] == kind && fmt.Sprint(e["node"]) == s {
			fmt.Fprintln(&b, e["time"])
		}
	}
	return b.String()
}

// waitSerial returns the serial log at path once it holds marker n times,
// or as it is after 10 s. The emulator prints its marker after its webhook
// was answered, so the log may lag the installed event by a moment.
func waitSerial(path, marker string, n int) string {
	return waitSerialFor(path, marker, n, 10*time.Second)
}

// waitSerialFor is waitSerial with its own time limit.
func waitSerialFor(path, marker string, n int, limit time.Duration) string {
	deadline := time.Now().Add(limit)
	for {
		serial := readFile(path)
		if strings.Count(serial, marker) >= n || time.Now().After(deadline) {
			return serial
		}
		time.Sleep(200 * time.Millisecond)
	}
}
