package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestDiscoveryIPv6: on a segment with no IPv4 at all, an unknown
// machine netboots the discovery agent as in TestNetbootIPv6 (OVMF's PXE
// over IPv6, the window's DHCPv6 answer, iPXE with the site's option
// 59); the agent takes the address the site's router advertises (SLAAC)
// and posts its report to the window over IPv6.
func TestDiscoveryIPv6(t *testing.T) {
	t.Parallel()
	media := netbootPrereqs(t)
	if _, err := exec.LookPath("unsquashfs"); err != nil {
		skipOrFail(t, "prepare --discovery needs unsquashfs (Debian package squashfs-tools)")
	}
	const mac = "52:54:00:77:42:10"
	l := newLab(t, 42, labOptions{ipv6Only: true, serveArgs: []string{"--discover"}, prepareArgs: []string{"--discovery"},
		siteConf: func(t *testing.T, l *bootLab) string {
			return l.np(t, "publish", "--ipv6-boot", "http://"+l.window(), "--format", "dnsmasq")
		}})
	l.serve(t, media)
	m := l.boot(t, vmOptions{name: "disco6", mac: mac, uefi: true, ipv6PXE: true, limit: 300 * time.Second})
	if !strings.Contains(m.serial, "PLASMA-DISCOVERY: OK") {
		t.Fatalf("the discovery agent did not report OK (took %s)", m.took)
	}
	m.wantSerial(t, "Start PXE over IPv6")
	m.wantSerial(t, "ip=fd77:42::")
	l.wantEvent(t, "discovered", mac)
	if out := l.np(t, "discovered"); !strings.Contains(strings.ToLower(out), mac) {
		t.Errorf("discovered does not list %s:\n%s", mac, out)
	}
}
