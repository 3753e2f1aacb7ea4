package pxe

import (
	"net"
	"net/netip"
	"strings"

	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
	"github.com/plasmactl/plasma-node/pxe/tftp"
)

// setupDHCPv6 sets up the IPv6 side of a window's network boot on its
// DHCP interface: the DHCPv6 boot server beside the site's DHCPv6 server
// (UEFI PXE and HTTP boot take their boot file URL from it; iPXE does
// not, see docs/netboot-ipv6.md) and TFTP on ip6, port 69. boot is the
// IPv4 side's boot configuration; its URLs name ip6 here unless the
// window has a BaseURL.
func (s *Server) setupDHCPv6(a *assembly, ip6 netip.Addr, mac net.HardwareAddr, port string, boot proxydhcp.BootConfig, allow func(net.HardwareAddr) bool, ipxeDir string) error {
	cfg := &s.cfg
	base := "http://" + net.JoinHostPort(ip6.String(), port)
	if cfg.BaseURL != "" {
		base = strings.TrimSuffix(cfg.BaseURL, "/")
	}
	boot.HTTPBase, boot.ScriptURL = base+"/ipxe", base+"/boot.ipxe"
	proxy := proxydhcp.Config6{ServerIP: ip6, ServerID: proxydhcp.ServerDUID(mac), Boot: boot}
	if err := proxy.Validate(); err != nil {
		return &ConfigError{Field: "DHCPInterface", Value: cfg.DHCPInterface, Reason: "cannot offer boot files over DHCPv6", Err: err}
	}
	a.dhcp6 = &dhcpserver.Server6{Proxy: proxy, Allow: allow, Interface: cfg.DHCPInterface, Logger: s.log}
	a.tftp6 = &tftp.Server{Root: ipxeDir, Addr: net.JoinHostPort(ip6.String(), "69"), Logger: s.log,
		MaxTransfers: cfg.TFTPMaxTransfers, MaxTransfersPerClient: cfg.TFTPMaxTransfersPerClient}
	return nil
}
