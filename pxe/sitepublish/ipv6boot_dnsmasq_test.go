package sitepublish

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/plasmactl/plasma-node/internal/netnstest"
)

// TestIPv6BootDnsmasq runs dnsmasq as a site's DHCPv6 server with the
// lines IPv6Boot writes, in a namespace lab, and solicits it as iPXE
// does (user class "iPXE", option 59 in its option request): the
// Advertise carries the window's script URL as option 59; a client
// without the user class (UEFI firmware) gets an address and no URL.
func TestIPv6BootDnsmasq(t *testing.T) {
	if _, err := exec.LookPath("dnsmasq"); err != nil {
		netnstest.Missing(t, "the dnsmasq test needs dnsmasq (Debian's dnsmasq-base)")
	}
	lab := netnstest.Lab{Client: "pn-s6-client", Server: "pn-s6-server", VethA: "pn-s6-a", VethB: "pn-s6-b",
		ClientCIDR: "fd7e::99/64", ServerCIDR: "fd7e::1/64"}
	lab.Create(t)
	lines, err := IPv6Boot(FormatDnsmasq, "http://[fd7e::2]:8090")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "site.conf")
	if err := os.WriteFile(conf, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	var log netnstest.Output
	d := exec.Command("ip", "netns", "exec", lab.Server, "dnsmasq", "--keep-in-foreground", "--conf-file="+conf, "--port=0",
		"--bind-interfaces", "--interface="+lab.VethB, "--dhcp-range=fd7e::100,fd7e::1ff,64,1h", "--enable-ra",
		"--dhcp-leasefile="+filepath.Join(dir, "leases"), "--pid-file=", "--log-dhcp", "--log-facility=-", "--user=root")
	d.Stdout, d.Stderr = &log, &log
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Process.Kill()
		d.Wait()
		if t.Failed() {
			t.Logf("dnsmasq log:\n%s", log.String())
		}
	})
	var conn net.PacketConn
	if err := netnstest.In(lab.Client, func() (err error) {
		conn, err = net.ListenPacket("udp6", "[::]:546")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	server := &net.UDPAddr{IP: net.ParseIP("ff02::1:2"), Port: 547, Zone: lab.VethA}
	solicit := func(userClass bool, last byte) *dhcpv6.Message {
		mac := net.HardwareAddr{0x52, 0x54, 0x00, 0x7e, 0x00, last}
		req := &dhcpv6.Message{MessageType: dhcpv6.MessageTypeSolicit, TransactionID: dhcpv6.TransactionID{0x7e, 0, last}}
		req.AddOption(dhcpv6.OptClientID(&dhcpv6.DUIDLL{HWType: iana.HWTypeEthernet, LinkLayerAddr: mac}))
		req.AddOption(&dhcpv6.OptIANA{IaId: [4]byte{0, 0, 0, last}})
		req.AddOption(dhcpv6.OptRequestedOption(dhcpv6.OptionDNSRecursiveNameServer, dhcpv6.OptionBootfileURL))
		if userClass {
			req.AddOption(&dhcpv6.OptUserClass{UserClasses: [][]byte{[]byte(UserClassIPXE)}})
		}
		ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
		defer cancel()
		buf := make([]byte, 1500)
		// The link-local address is tentative for a second or two (DAD):
		// send until an Advertise comes.
		for ctx.Err() == nil {
			conn.WriteTo(req.ToBytes(), server)
			conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			for {
				n, _, err := conn.ReadFrom(buf)
				if err != nil {
					break
				}
				if m, err := dhcpv6.MessageFromBytes(buf[:n]); err == nil && m.TransactionID == req.TransactionID && m.MessageType == dhcpv6.MessageTypeAdvertise {
					return m
				}
			}
		}
		t.Fatalf("no Advertise from dnsmasq within 15 s (user class %t)", userClass)
		return nil
	}
	ipxe := solicit(true, 1)
	if got, want := ipxe.Options.BootFileURL(), "http://[fd7e::2]:8090/boot.ipxe"; got != want {
		t.Errorf("iPXE's Advertise: option 59 %q; want %q\n%s", got, want, ipxe.Summary())
	}
	if ia := ipxe.Options.OneIANA(); ia == nil || ia.Options.OneAddress() == nil {
		t.Errorf("iPXE's Advertise holds no address:\n%s", ipxe.Summary())
	}
	firmware := solicit(false, 2)
	if got := firmware.Options.BootFileURL(); got != "" {
		t.Errorf("a client without the iPXE user class got option 59 %q", got)
	}
	if !strings.Contains(log.String(), "ipxe6") {
		t.Errorf("dnsmasq's log does not show the ipxe6 tag")
	}
}
