package agent

import (
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// bootMAC returns the MAC of the NIC the machine booted from: BOOTIF=
// on the kernel command line (iPXE's and grub's "01-" and the MAC with
// dashes), else leased, the NIC that took the DHCP lease; only a MAC of
// one of nics, "" otherwise.
func bootMAC(cmdline, leased string, nics []discovery.NIC) string {
	ours := func(mac string) bool {
		return slices.ContainsFunc(nics, func(n discovery.NIC) bool { return n.MAC == mac })
	}
	for _, w := range strings.Fields(cmdline) {
		v, ok := strings.CutPrefix(w, "BOOTIF=")
		if !ok {
			continue
		}
		v = strings.ReplaceAll(v, "-", ":")
		if len(v) == len("01:")+17 {
			v = v[3:] // the hardware type, 01 for Ethernet
		}
		if mac, ok := answer.CanonicalMAC(v); ok && ours(mac) {
			return mac
		}
	}
	if mac, ok := answer.CanonicalMAC(leased); ok && ours(mac) {
		return mac
	}
	return ""
}
