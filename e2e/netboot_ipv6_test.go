package e2e

import (
	"testing"
	"time"
)

// TestNetbootIPv6 boots a QEMU machine on OVMF on a segment with no IPv4
// at all: the site's dnsmasq leases by DHCPv6, advertises the prefix
// (SLAAC too) and carries the lines node-provisioner publish --ipv6-boot
// prints for iPXE. OVMF's PXE over IPv6 takes its boot file URL from the
// window's DHCPv6 answer beside the site's lease (a proxy Advertise, then
// its Request on port 4011), fetches snponly.efi over TFTP on IPv6; iPXE
// takes the window's script URL from the site's DHCPv6 server; the
// kernel and initrd come over HTTP on IPv6, and the installer emulator,
// with a SLAAC address, posts for its answer over IPv6.
func TestNetbootIPv6(t *testing.T) {
	t.Parallel()
	media := netbootPrereqs(t)
	const mac = "52:54:00:77:41:10"
	l := newLab(t, 41, labOptions{ipv6Only: true, kernelArgs: []string{"emu.ipv6"},
		siteConf: func(t *testing.T, l *bootLab) string {
			return l.np(t, "publish", "--ipv6-boot", "http://"+l.window(), "--format", "dnsmasq")
		}})
	l.register(t, "v6one", mac)
	l.serve(t, media)
	m := l.boot(t, vmOptions{name: "v6one", mac: mac, uefi: true, ipv6PXE: true, limit: 300 * time.Second})
	m.wantOK(t, "v6one.")
	m.wantSerial(t, "Start PXE over IPv6")
	m.wantDetail(t, "ip=fd77:41::", "webhook=200")
	l.wantLog(t, "DHCPv6 ADVERTISE")
	l.wantLog(t, "DHCPv6 REPLY")
	l.wantLog(t, `msg="TFTP sent"`)
	l.wantEvent(t, "installed", "v6one")
}
