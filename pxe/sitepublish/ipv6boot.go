package sitepublish

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/plasmactl/plasma-node/internal/hostport"
)

// UserClassIPXE is the user class (DHCPv6 option 15) iPXE sends; the
// lines of [IPv6Boot] give the clients that send it a tag, ipxe6.
const (
	UserClassIPXE = "iPXE"
	tagIPXE       = "ipxe6"
)

// ErrWindowURL: the window URL cannot be published for IPv6 boot.
var ErrWindowURL = errors.New("window URL cannot be published")

// IPv6Boot writes what a site's DHCPv6 server needs to give iPXE (user
// class "iPXE") the window's iPXE script as its boot file URL (option
// 59), in format f ([FormatDnsmasq], [FormatKea] or [FormatOPNsense]):
// window is the window's base URL on the IPv6 segment, such as
// "http://[2001:db8::2]:8090"; the script is window + "/boot.ipxe".
//
// UEFI firmware needs no line: EDK2's PXE and HTTP boot clients take
// their boot file URL from the window's own DHCPv6 answer (a proxy
// offer, beside the site's lease). iPXE does not: on a segment with
// stateful DHCPv6 it takes its settings only from the server whose
// Advertise holds its address (iPXE's dhcpv6.c).
//
// A window URL that is not an absolute http(s) URL, or names a
// link-local address (no firmware takes its zone), gives an error
// wrapping [ErrWindowURL]; a format other than the three an error
// wrapping [ErrFormat].
func IPv6Boot(f Format, window string) (string, error) {
	script, err := scriptURL(window)
	if err != nil {
		return "", err
	}
	switch f {
	case FormatDnsmasq:
		return fmt.Sprintf(`# dnsmasq: IPv6 network boot. UEFI firmware takes its boot file from the
# window's DHCPv6 answer; iPXE only from the server that leases its
# address: this one.
dhcp-userclass=set:%[1]s,%[2]s
dhcp-option=tag:%[1]s,option6:bootfile-url,%[3]s
`, tagIPXE, UserClassIPXE, script), nil
	case FormatKea:
		return fmt.Sprintf(`// ISC Kea, in "Dhcp6": IPv6 network boot. UEFI firmware takes its boot file
// from the window's DHCPv6 answer; iPXE only from the server that leases
// its address: this one. iPXE sends user class %[2]q (option 15: a
// two-byte length, then the name).
"client-classes": [
  {
    "name": "%[1]s",
    "test": "substring(option[15].hex,2,4) == '%[2]s'",
    "option-data": [ { "name": "bootfile-url", "data": "%[3]s" } ]
  }
]
`, tagIPXE, UserClassIPXE, script), nil
	case FormatOPNsense:
		return fmt.Sprintf(`# OPNsense: Services > ISC DHCPv6 > (the boot segment's interface) > Network
# booting: IPv6 network boot. UEFI firmware takes its boot file from the
# window's DHCPv6 answer; iPXE only from the server that leases its
# address: this one. The page sets one URL for every client: firmware
# still prefers the window's answer (a proxy offer wins over a lease with
# a URL), iPXE takes this one.
#   Enable network booting, Bootfile URL %s
`, script), nil
	}
	return "", fmt.Errorf("%w %q: IPv6 boot lines are written for %s, %s and %s", ErrFormat, string(f), FormatDnsmasq, FormatKea, FormatOPNsense)
}

// scriptURL is window's iPXE script URL, once window is checked.
func scriptURL(window string) (string, error) {
	u, err := url.Parse(window)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%w: %q: want the window's absolute http:// or https:// URL, such as http://[2001:db8::2]:8090", ErrWindowURL, window)
	}
	if err := hostport.CheckAdvertised(u.Hostname()); err != nil {
		return "", fmt.Errorf("%w: %q: %w", ErrWindowURL, window, err)
	}
	return strings.TrimSuffix(u.String(), "/") + "/boot.ipxe", nil
}
