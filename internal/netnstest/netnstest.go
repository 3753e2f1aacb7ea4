// Package netnstest makes network-namespace labs for tests: pairs of
// namespaces joined by a veth pair, where a PXE client and a provisioning
// window talk over a real link (broadcasts, interface-bound sockets,
// port 67 and 69) without touching the host's network. It needs root
// and iproute2; without them a test skips, or fails under PLASMA_E2E=1.
//
// It is for tests only; it configures nothing but the namespaces it
// makes and removes them when the test ends.
package netnstest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Missing skips the test for a missing tool or privilege, or fails it
// under PLASMA_E2E=1, where every part must be present.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("PLASMA_E2E") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// Run runs a command and fails the test with its output when it fails.
func Run(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Lab is a pair of namespaces joined by a veth pair: VethA with
// ClientCIDR in namespace Client, VethB with ServerCIDR in namespace
// Server.
type Lab struct {
	Client, Server         string
	VethA, VethB           string
	ClientCIDR, ServerCIDR string
}

// Create makes the lab and removes it when the test ends, also when it
// fails. It skips (or fails under PLASMA_E2E=1) without root or ip.
func (l Lab) Create(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "the network-namespace lab needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		Missing(t, "the lab needs ip from Debian's iproute2")
	}
	for _, ns := range []string{l.Client, l.Server} {
		exec.Command("ip", "netns", "del", ns).Run()
	}
	t.Cleanup(func() {
		for _, ns := range []string{l.Client, l.Server} {
			exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	Run(t, "ip", "netns", "add", l.Client)
	Run(t, "ip", "netns", "add", l.Server)
	Run(t, "ip", "link", "add", l.VethA, "netns", l.Client, "type", "veth", "peer", "name", l.VethB, "netns", l.Server)
	Run(t, "ip", "-n", l.Client, "link", "set", "lo", "up")
	Run(t, "ip", "-n", l.Server, "link", "set", "lo", "up")
	Run(t, "ip", "-n", l.Client, "addr", "add", l.ClientCIDR, "dev", l.VethA)
	Run(t, "ip", "-n", l.Server, "addr", "add", l.ServerCIDR, "dev", l.VethB)
	Run(t, "ip", "-n", l.Client, "link", "set", l.VethA, "up")
	Run(t, "ip", "-n", l.Server, "link", "set", l.VethB, "up")
	Run(t, "ip", "-n", l.Client, "route", "add", "255.255.255.255/32", "dev", l.VethA)
}
