package pxe

import (
	"net"
	"net/netip"
	"strings"

	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
	"github.com/plasmactl/plasma-node/pxe/tftp"
)

// scriptBases returns the base URLs boot scripts name on a DHCP
// interface whose addresses are ip4 and ip6 (either may be invalid:
// absent): base, for every client, names ip4 (else ip6), and base6, for
// the clients that come over IPv6, names ip6 on a dual-stack segment
// ("" otherwise). A baseURL names the window for both.
func scriptBases(baseURL string, ip4, ip6 netip.Addr, port string) (base, base6 string) {
	if baseURL != "" {
		return strings.TrimSuffix(baseURL, "/"), ""
	}
	if !ip4.IsValid() {
		return "http://" + net.JoinHostPort(ip6.String(), port), ""
	}
	base = "http://" + net.JoinHostPort(ip4.String(), port)
	if ip6.IsValid() {
		base6 = "http://" + net.JoinHostPort(ip6.String(), port)
	}
	return base, base6
}

// setupDHCPv6 sets up the IPv6 side of a window's network boot on its
// DHCP interface: the DHCPv6 boot server beside the site's DHCPv6 server
// (UEFI PXE and HTTP boot take their boot file URL from it; iPXE does
// not, see docs/ipv6.md) and TFTP on ip6, port 69. boot is the IPv4
// side's boot configuration; its URLs name base6 here, the window's
// base URL for IPv6 clients ([scriptBases]).
func (s *Server) setupDHCPv6(a *assembly, ip6 netip.Addr, mac net.HardwareAddr, base6 string, boot proxydhcp.BootConfig, allow func(net.HardwareAddr) bool, ipxeDir string) error {
	cfg := &s.cfg
	boot.HTTPBase, boot.ScriptURL = base6+"/ipxe", base6+"/boot.ipxe"
	proxy := proxydhcp.Config6{ServerIP: ip6, ServerID: proxydhcp.ServerDUID(mac), Boot: boot}
	if err := proxy.Validate(); err != nil {
		return &ConfigError{Field: "DHCPInterface", Value: cfg.DHCPInterface, Reason: "cannot offer boot files over DHCPv6", Err: err}
	}
	a.dhcp6 = &dhcpserver.Server6{Proxy: proxy, Allow: allow, Interface: cfg.DHCPInterface, Logger: s.log}
	a.tftp6 = &tftp.Server{Root: ipxeDir, Addr: net.JoinHostPort(ip6.String(), "69"), Logger: s.log,
		MaxTransfers: cfg.TFTPMaxTransfers, MaxTransfersPerClient: cfg.TFTPMaxTransfersPerClient}
	return nil
}
