// Command dhcpload sends PXE DISCOVERs from distinct MACs to a proxy-DHCP
// server and reports offers per second and latency percentiles as JSON.
// It is a benchmark tool for bench/run.sh, not a test.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

// result is what one run reports.
type result struct {
	Sent        int     `json:"sent"`
	Offers      int     `json:"offers"`
	Lost        int     `json:"lost"`
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	PerSecond   float64 `json:"offers_per_second"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
}

func main() {
	iface := flag.String("iface", "", "client interface to broadcast on (SO_BINDTODEVICE)")
	n := flag.Int("n", 2000, "number of DISCOVERs, each from its own MAC")
	conc := flag.Int("c", 32, "DISCOVERs outstanding at once")
	timeout := flag.Duration("timeout", time.Second, "how long to wait for each offer")
	macBase := flag.Uint("mac-base", 0, "added to the MAC counter, so runs can use fresh MACs")
	arch := flag.String("arch", "uefi", "firmware of the emulated clients: uefi (x86-64 EFI, arch 7) or bios (x86 BIOS, arch 0)")
	flag.Parse()
	a, ok := archs[*arch]
	if !ok {
		fmt.Fprintf(os.Stderr, "dhcpload: -arch %q: want uefi or bios\n", *arch)
		os.Exit(2)
	}
	r, err := run(*iface, *n, *conc, *timeout, uint32(*macBase), a)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dhcpload:", err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(r)
}

// client is what a DISCOVER says about its firmware.
type client struct {
	class string
	arch  iana.Arch
}

var archs = map[string]client{
	"uefi": {"PXEClient:Arch:00007:UNDI:003016", iana.EFI_X86_64},
	"bios": {"PXEClient:Arch:00000:UNDI:002001", iana.INTEL_X86PC},
}

func run(iface string, n, conc int, timeout time.Duration, macBase uint32, a client) (result, error) {
	conn, err := dhcpserver.Listen(iface, proxydhcp.DHCPClientPort)
	if err != nil {
		return result{}, err
	}
	defer conn.Close()
	dst := &net.UDPAddr{IP: net.IPv4bcast, Port: proxydhcp.DHCPPort}

	pkts := make([][]byte, n)
	xids := make(map[dhcpv4.TransactionID]int, n)
	for i := range n {
		mac := net.HardwareAddr{0x52, 0x54, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(mac[2:], macBase+uint32(i))
		var xid dhcpv4.TransactionID
		binary.BigEndian.PutUint32(xid[:], 0x5eed0000+macBase+uint32(i))
		req, err := dhcpv4.NewDiscovery(mac,
			dhcpv4.WithTransactionID(xid),
			dhcpv4.WithOption(dhcpv4.OptClassIdentifier(a.class)),
			dhcpv4.WithOption(dhcpv4.OptClientArch(a.arch)),
			dhcpv4.WithBroadcast(true))
		if err != nil {
			return result{}, fmt.Errorf("build discover %d: %w", i, err)
		}
		pkts[i] = req.ToBytes()
		xids[xid] = i
	}

	sent := make([]time.Time, n)
	lat := make([]time.Duration, n)
	var mu sync.Mutex
	slots := make(chan struct{}, conc)
	done := make(chan struct{})
	got := 0

	// Receiver: match offers by xid, free a slot per answer.
	go func() {
		buf := make([]byte, 4096)
		for {
			m, _, err := conn.ReadFrom(buf)
			now := time.Now()
			if err != nil {
				close(done)
				return
			}
			if m < 240 {
				continue
			}
			var xid dhcpv4.TransactionID
			copy(xid[:], buf[4:8])
			mu.Lock()
			i, ok := xids[xid]
			if ok && lat[i] == 0 && buf[0] == byte(dhcpv4.OpcodeBootReply) {
				lat[i] = now.Sub(sent[i])
				got++
				mu.Unlock()
				select {
				case <-slots:
				default:
				}
				continue
			}
			mu.Unlock()
		}
	}()

	start := time.Now()
	for i := range n {
		select {
		case slots <- struct{}{}:
		case <-time.After(timeout):
			// A lost reply keeps its slot: take it back.
		}
		mu.Lock()
		sent[i] = time.Now()
		mu.Unlock()
		if _, err := conn.WriteTo(pkts[i], dst); err != nil {
			return result{}, fmt.Errorf("send discover %d: %w", i, err)
		}
	}
	end := time.Now().Add(timeout)
	for time.Now().Before(end) {
		mu.Lock()
		g := got
		mu.Unlock()
		if g == n {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	var ok []time.Duration
	last := start
	for i, d := range lat {
		if d > 0 {
			ok = append(ok, d)
			if t := sent[i].Add(d); t.After(last) {
				last = t
			}
		}
	}
	mu.Unlock()
	conn.Close()
	<-done
	slices.Sort(ok)
	el := last.Sub(start).Seconds()
	r := result{Sent: n, Offers: len(ok), Lost: n - len(ok), Concurrency: conc, Seconds: el}
	if el > 0 {
		r.PerSecond = float64(len(ok)) / el
	}
	if len(ok) > 0 {
		pct := func(p float64) float64 {
			return float64(ok[min(len(ok)-1, int(p*float64(len(ok))))].Microseconds()) / 1000
		}
		r.P50ms, r.P99ms, r.MaxMs = pct(0.50), pct(0.99), float64(ok[len(ok)-1].Microseconds())/1000
	}
	return r, nil
}
