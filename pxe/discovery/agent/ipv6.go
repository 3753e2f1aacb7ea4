package agent

import (
	"bufio"
	"encoding/hex"
	"io"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// wantsIPv6 reports whether the window's URL names an IPv6 address: the
// agent then takes the address the segment's router advertises (SLAAC)
// or its DHCPv6 server gives, which the kernel configures, instead of
// asking for a DHCPv4 lease.
func wantsIPv6(t Target) bool {
	u, err := url.Parse(t.URL)
	if err != nil {
		return false
	}
	a, err := netip.ParseAddr(u.Hostname())
	return err == nil && a.Is6() && !a.Is4In6()
}

// ifaTentative is IFA_F_TENTATIVE: an address still in duplicate
// address detection, which cannot be used yet.
const ifaTentative = 0x40

// globalIPv6 reads /proc/net/if_inet6 (r) for the first global IPv6
// address, not tentative, of an interface other than lo, and returns it
// with its interface's name.
func globalIPv6(r io.Reader) (netip.Addr, string, bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// address ifindex prefixlen scope flags name
		f := strings.Fields(sc.Text())
		if len(f) != 6 || f[5] == "lo" || f[3] != "00" {
			continue
		}
		flags, err := strconv.ParseUint(f[4], 16, 32)
		raw, herr := hex.DecodeString(f[0])
		if err != nil || herr != nil || len(raw) != 16 || flags&ifaTentative != 0 {
			continue
		}
		return netip.AddrFrom16([16]byte(raw)), f[5], true
	}
	return netip.Addr{}, "", false
}
