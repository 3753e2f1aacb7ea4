// Package bmctest runs a real IPMI BMC for tests: Debian's ipmi_sim
// (package openipmi) on a loopback UDP port, with chassis control through
// a hook command (ipmi_sim's chassis_control, "recipe B" of the BMC
// reference), and ipmitool (package ipmitool) to cross-check it. Without
// the tools a test skips, or fails under PLASMA_E2E=1.
//
// It is for tests only.
package bmctest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Missing skips the test for a missing tool, or fails it under
// PLASMA_E2E=1, where every part must be present.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("PLASMA_E2E") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// Need skips (or fails) the test unless ipmi_sim and ipmitool are
// installed.
func Need(t testing.TB) {
	t.Helper()
	for _, tool := range []struct{ name, pkg string }{{"ipmi_sim", "openipmi"}, {"ipmitool", "ipmitool"}} {
		if _, err := exec.LookPath(tool.name); err != nil {
			Missing(t, "needs %s (Debian package %s)", tool.name, tool.pkg)
		}
	}
}

// Sim is a running ipmi_sim.
type Sim struct {
	// Port is its UDP port on 127.0.0.1.
	Port int
	// User and Password are its one account (admin privilege).
	User, Password string
	// Dir holds its configuration, state and log (sim.log).
	Dir string
	// Netns is the network namespace it runs in; "" for the test's own.
	Netns string
	// VMPort is the TCP port on 127.0.0.1 where it waits for a QEMU
	// machine's BMC link ([StartForVM]); 0 when it has none.
	VMPort int
}

// inNetns returns argv run in namespace ns ("" for the current one).
func inNetns(ns string, argv ...string) []string {
	if ns == "" {
		return argv
	}
	return append([]string{"ip", "netns", "exec", ns}, argv...)
}

// Endpoint returns "ipmi://127.0.0.1:PORT".
func (s *Sim) Endpoint() string { return fmt.Sprintf("ipmi://127.0.0.1:%d", s.Port) }

// FreeUDPPort returns a UDP port on 127.0.0.1 that nothing listens on.
func FreeUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// Start runs ipmi_sim on a free port with hook as its chassis_control
// command (ipmi_sim runs "HOOK 0x20 get power" and so on) and stops it
// when the test ends. It returns once the BMC answers ipmitool.
func Start(t testing.TB, hook, user, password string) *Sim {
	t.Helper()
	return StartIn(t, "", hook, user, password)
}

// StartIn is [Start] in network namespace netns, on that namespace's
// 127.0.0.1: a BMC that only a program in netns reaches, as a site's
// management network is reached only from the site's host.
func StartIn(t testing.TB, netns, hook, user, password string) *Sim {
	t.Helper()
	return start(t, &Sim{Port: FreeUDPPort(t), User: user, Password: password, Dir: t.TempDir(), Netns: netns}, hook)
}

// StartForVM is [StartIn] with a BMC link for a QEMU machine in netns:
// ipmi_sim listens on 127.0.0.1:[Sim.VMPort] there, and the machine
// takes it as its BMC with [Sim.QEMUArgs] (QEMU's ipmi-bmc-extern on
// a KCS interface): the host reaches this BMC in-band, through its
// system interface, as well as over the LAN.
func StartForVM(t testing.TB, netns, hook, user, password string) *Sim {
	t.Helper()
	return start(t, &Sim{Port: FreeUDPPort(t), User: user, Password: password, Dir: t.TempDir(), Netns: netns, VMPort: FreeTCPPort(t)}, hook)
}

// QEMUArgs are the arguments that give a QEMU machine this sim as its
// BMC on a KCS system interface ([StartForVM]).
func (s *Sim) QEMUArgs() []string {
	return []string{"-chardev", fmt.Sprintf("socket,id=ipmi0,host=127.0.0.1,port=%d,reconnect=2", s.VMPort),
		"-device", "ipmi-bmc-extern,id=bmc0,chardev=ipmi0", "-device", "isa-ipmi-kcs,bmc=bmc0"}
}

// FreeTCPPort returns a TCP port on 127.0.0.1 that nothing listens on.
func FreeTCPPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func start(t testing.TB, s *Sim, hook string) *Sim {
	t.Helper()
	Need(t)
	vm := ""
	if s.VMPort != 0 {
		vm = fmt.Sprintf("  serial 15 127.0.0.1 %d codec VM\n", s.VMPort)
	}
	conf := fmt.Sprintf(`name "vbmc0"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 %d
    priv_limit admin
    allowed_auths_callback md5
    allowed_auths_user md5
    allowed_auths_operator md5
    allowed_auths_admin md5
    guid a123456789abcdefa123456789abcdef
  endlan
%s  chassis_control "%s 0x20"
  user 2 true "%s" "%s" admin 10 md5
`, s.Port, vm, hook, s.User, s.Password)
	emu := "mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02\nsel_enable 0x20 1000 0x0a\nmc_enable 0x20\n"
	write(t, filepath.Join(s.Dir, "lan.conf"), conf, 0o600)
	write(t, filepath.Join(s.Dir, "bmc.emu"), emu, 0o600)
	os.MkdirAll(filepath.Join(s.Dir, "state"), 0o700)
	logf, err := os.Create(filepath.Join(s.Dir, "sim.log"))
	if err != nil {
		t.Fatal(err)
	}
	argv := inNetns(s.Netns, "ipmi_sim", "-c", filepath.Join(s.Dir, "lan.conf"), "-f", filepath.Join(s.Dir, "bmc.emu"), "-s", filepath.Join(s.Dir, "state"), "-n")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(s.Dir, "sim.log"))
			t.Logf("ipmi_sim log:\n%s", b)
		}
	})
	end := time.Now().Add(10 * time.Second)
	for {
		if _, err := s.IPMItool(context.Background(), "chassis", "power", "status"); err == nil {
			return s
		}
		select {
		case <-done:
			b, _ := os.ReadFile(filepath.Join(s.Dir, "sim.log"))
			t.Fatalf("ipmi_sim exited:\n%s", b)
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("ipmi_sim on port %d does not answer ipmitool", s.Port)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// IPMItool runs ipmitool -I lanplus -C 3 against the sim, the password
// passed in the environment (-E), never as an argument.
func (s *Sim) IPMItool(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	argv := inNetns(s.Netns, append([]string{"ipmitool", "-I", "lanplus", "-C", "3", "-H", "127.0.0.1", "-p", fmt.Sprint(s.Port), "-U", s.User, "-E"}, args...)...)
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Env = append(os.Environ(), "IPMI_PASSWORD="+s.Password)
	out, err := c.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ipmitool %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// StateHook writes, in a new folder, a chassis_control hook that keeps
// the power state in files and no machine: "power" (0 or 1), "boot"
// (the pending boot device) and "boots", one line per power-on or reset
// with the device it booted ("pxe" or "none"). It returns the hook's path.
func StateHook(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	hook := filepath.Join(dir, "hook.sh")
	write(t, hook, stateHook, 0o755)
	return hook
}

// Read returns a state hook's file ("power", "boot", "boots", "hook.log")
// trimmed; "" when absent.
func Read(hook, name string) string {
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(hook), name))
	return strings.TrimSpace(string(b))
}

const stateHook = `#!/bin/sh
# ipmi_sim chassis_control hook: HOOK 0x20 get power|boot... / set power 0|1 reset 1 shutdown 1 boot DEV ...
D=$(cd "$(dirname "$0")" && pwd)
echo "$*" >> "$D/hook.log"
shift
op=$1; shift
power() { cat "$D/power" 2>/dev/null || echo 0; }
boot() { cat "$D/boot" 2>/dev/null || echo none; }
booted() { echo "$(boot)" >> "$D/boots"; echo none > "$D/boot"; }
case $op in
  get) for p; do case $p in power) echo "power:$(power)" ;; boot) echo "boot:$(boot)" ;; *) exit 1 ;; esac; done ;;
  set) while [ $# -ge 2 ]; do case $1 in
         power) if [ "$2" = 1 ]; then [ "$(power)" = 1 ] || { echo 1 > "$D/power"; booted; }; else echo 0 > "$D/power"; fi ;;
         reset) [ "$(power)" = 1 ] && booted ;;
         shutdown) echo 0 > "$D/power" ;;
         boot) echo "$2" > "$D/boot" ;;
         identify) ;;
         *) exit 1 ;;
       esac; shift 2; done ;;
  *) exit 1 ;;
esac
exit 0
`

func write(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}
