// Command dhcpnull is the proxy-DHCP benchmark's ceiling: a responder that
// does no work. It answers every BOOTREQUEST on the DHCP port with one
// fixed proxy OFFER (the request's xid and chaddr copied in), broadcast,
// and decides, logs and records nothing. What bench/dhcpload measures
// against it is what the harness, the veth pair and the kernel's UDP path
// allow on the machine; a real server's rate is read as a share of it.
// It reads and writes in batches (recvmmsg, sendmmsg) as
// pxe/dhcpserver does, so that it stays the ceiling of what a server
// doing the same system calls can reach. It is a benchmark tool for
// bench/run.sh, not a test.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"golang.org/x/net/ipv4"

	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

func main() {
	iface := flag.String("iface", "", "interface to listen on (SO_BINDTODEVICE)")
	serverIP := flag.String("server-ip", "", "next-server of the fixed offer")
	file := flag.String("file", "snponly.efi", "boot file of the fixed offer")
	flag.Parse()
	if err := run(*iface, *serverIP, *file); err != nil {
		fmt.Fprintln(os.Stderr, "dhcpnull:", err)
		os.Exit(1)
	}
}

func run(iface, serverIP, file string) error {
	sip, err := netip.ParseAddr(serverIP)
	if err != nil || !sip.Is4() {
		return fmt.Errorf("-server-ip %q: want an IPv4 address", serverIP)
	}
	tmpl, err := template(sip, file)
	if err != nil {
		return err
	}
	conn, err := dhcpserver.Listen(iface, proxydhcp.DHCPPort)
	if err != nil {
		return err
	}
	defer conn.Close()
	pc := ipv4.NewPacketConn(conn)
	dst := &net.UDPAddr{IP: net.IPv4bcast, Port: proxydhcp.DHCPClientPort}
	var wg sync.WaitGroup
	errc := make(chan error, runtime.GOMAXPROCS(0))
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			if err := answer(pc, tmpl, dst); err != nil {
				errc <- err
			}
		})
	}
	wg.Wait()
	return <-errc
}

// batch is how many datagrams one recvmmsg reads and one sendmmsg writes
// at most, as in pxe/dhcpserver.
const batch = 64

// answer reads what has arrived, a batch at a time, and sends the fixed
// offer for each BOOTREQUEST in one sendmmsg.
func answer(pc *ipv4.PacketConn, tmpl []byte, dst net.Addr) error {
	in := make([]ipv4.Message, batch)
	out := make([]ipv4.Message, batch)
	for i := range in {
		in[i].Buffers = [][]byte{make([]byte, 4096)}
		out[i].Buffers = [][]byte{append([]byte(nil), tmpl...)}
		out[i].Addr = dst
	}
	for {
		n, err := pc.ReadBatch(in, 0)
		if err != nil {
			return err
		}
		k := 0
		for _, m := range in[:n] {
			q := m.Buffers[0][:m.N]
			if len(q) < 240 || q[0] != byte(dhcpv4.OpcodeBootRequest) {
				continue
			}
			o := out[k].Buffers[0]
			copy(o[4:8], q[4:8])     // xid
			copy(o[28:44], q[28:44]) // chaddr
			k++
		}
		for off := 0; off < k; {
			w, err := pc.WriteBatch(out[off:k], 0)
			if err != nil {
				return err
			}
			off += w
		}
	}
}

// template is the fixed OFFER, as a proxy-DHCP server sends one.
func template(sip netip.Addr, file string) ([]byte, error) {
	ip := net.IP(sip.AsSlice())
	m, err := dhcpv4.New(
		dhcpv4.WithReply(&dhcpv4.DHCPv4{OpCode: dhcpv4.OpcodeBootRequest, HWType: 1, ClientHWAddr: make(net.HardwareAddr, 6)}),
		dhcpv4.WithMessageType(dhcpv4.MessageTypeOffer),
		dhcpv4.WithBroadcast(true),
		dhcpv4.WithServerIP(ip),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(ip)),
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier(proxydhcp.ClassPXE)),
		dhcpv4.WithOption(dhcpv4.OptBootFileName(file)),
	)
	if err != nil {
		return nil, fmt.Errorf("build the fixed offer: %w", err)
	}
	m.BootFileName = file
	return m.ToBytes(), nil
}
