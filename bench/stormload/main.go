// Command stormload emulates a boot storm: many PXE clients at once, each
// doing what a real machine does on its way to an installed system:
// a proxy-DHCP DISCOVER, a TFTP fetch of the offered boot file, a GET of
// its iPXE script and a POST of its system info to /answer. Client i uses
// the MAC 52:54:00:99:HH:LL (i = HHLL) so each one matches its own
// registration. It reports the total time and per-client percentiles as
// JSON. It is a benchmark tool for bench/run.sh, not a test.
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/plasmactl/plasma-node/bench/internal/tftpget"
	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

// result is what one run reports.
type result struct {
	Clients  int     `json:"clients"`
	OK       int     `json:"ok"`
	Failures int     `json:"failures"`
	Seconds  float64 `json:"seconds"`
	P50s     float64 `json:"p50_s"`
	P99s     float64 `json:"p99_s"`
	MaxS     float64 `json:"max_s"`
	Stages50 stages  `json:"stage_p50_ms"`
	Stages   stages  `json:"stage_p99_ms"`
	Events   *lag    `json:"events,omitempty"`
	// APIEvents is the management API's event stream, when followed.
	APIEvents *lag     `json:"api_events,omitempty"`
	Errors    []string `json:"errors,omitempty"`
	// ByServer counts the clients that finished by the server whose
	// offer they took (TFTP, script, kernel, initrd and answer from it).
	ByServer map[string]int `json:"by_server,omitempty"`
}

// stages is one percentile of each step over the clients that finished.
type stages struct {
	DHCP   float64 `json:"dhcp"`
	TFTP   float64 `json:"tftp"`
	Script float64 `json:"script"`
	Kernel float64 `json:"kernel"`
	Initrd float64 `json:"initrd"`
	Answer float64 `json:"answer"`
}

// MAC returns client i's MAC, the one its registration pins.
func MAC(i int) net.HardwareAddr {
	return net.HardwareAddr{0x52, 0x54, 0x00, 0x99, byte(i >> 8), byte(i)}
}

func main() {
	iface := flag.String("iface", "", "client interface to broadcast DISCOVERs on (SO_BINDTODEVICE)")
	server := flag.String("server", "", "server IP (TFTP on :69 and HTTP on -http-port, unless the offer names another: a machine boots from the host whose offer it took)")
	httpPort := flag.Int("http-port", 8090, "the server's HTTP port")
	clients := flag.Int("c", 200, "clients booting at once")
	sysinfo := flag.String("sysinfo", "", "system-info JSON to post; its MACs and DMI UUID are replaced by each client's")
	timeout := flag.Duration("timeout", 30*time.Second, "how long one client may take")
	events := flag.String("events", "", "the window's event log (events.jsonl) to follow during the storm: how far behind each event is written")
	sources := flag.String("sources", "", "a prefix (10.79.0.0/16) whose host addresses 1, 2, … the clients' HTTP requests come from, one each, as machines with their own leases; empty: the interface's address for all")
	apiURL := flag.String("api", "", "a daemon's API URL (https://…) on the same state folder, whose /api/v1/events to follow during the storm (token in STORMLOAD_TOKEN)")
	prefer := flag.String("prefer", "", "server IPs, comma-separated: client i takes the offer of the (i mod count)th if it comes within 1 s of a DISCOVER, else the first other one, as machines behind relays that point at different hosts do; empty: the first offer")
	fingerprint := flag.String("fingerprint", "", "the -api certificate's SHA-256 fingerprint, as node-provisioner tls fingerprint prints it")
	flag.Parse()
	if *iface == "" || *server == "" || *sysinfo == "" {
		fmt.Fprintln(os.Stderr, "stormload: -iface, -server and -sysinfo are required")
		os.Exit(2)
	}
	tmpl, err := os.ReadFile(*sysinfo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stormload:", err)
		os.Exit(1)
	}
	var src netip.Prefix
	if *sources != "" {
		if src, err = netip.ParsePrefix(*sources); err != nil || !src.Addr().Is4() {
			fmt.Fprintln(os.Stderr, "stormload: -sources: want an IPv4 prefix such as 10.79.0.0/16")
			os.Exit(2)
		}
	}
	var f *follower
	if *events != "" {
		if f, err = follow(*events); err != nil {
			fmt.Fprintln(os.Stderr, "stormload:", err)
			os.Exit(1)
		}
	}
	var af *apiFollower
	if *apiURL != "" {
		if af, err = followAPI(*apiURL, os.Getenv("STORMLOAD_TOKEN"), *fingerprint); err != nil {
			fmt.Fprintln(os.Stderr, "stormload:", err)
			os.Exit(1)
		}
	}
	var prefs []string
	if *prefer != "" {
		prefs = strings.Split(*prefer, ",")
	}
	r, err := run(*iface, *server, *httpPort, *clients, tmpl, *timeout, src, prefs)
	if f != nil {
		r.Events = f.stop()
	}
	if af != nil {
		var aerr error
		if r.APIEvents, aerr = af.stop(); aerr != nil {
			r.Errors = append(r.Errors, "api events: "+aerr.Error())
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stormload:", err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(r)
}

// body is client i's system info: the template with its MAC and UUID.
func body(tmpl []byte, i int) ([]byte, error) {
	var si map[string]any
	if err := json.Unmarshal(tmpl, &si); err != nil {
		return nil, fmt.Errorf("sysinfo template: %w", err)
	}
	mac := MAC(i).String()
	if nics, ok := si["network_interfaces"].([]any); ok {
		for _, n := range nics {
			if m, ok := n.(map[string]any); ok && m["mac"] != "00:00:00:00:00:00" {
				m["mac"] = mac
			}
		}
	}
	if dmi, ok := si["dmi"].(map[string]any); ok {
		if sys, ok := dmi["system"].(map[string]any); ok {
			sys["uuid"] = fmt.Sprintf("5707B007-0000-4000-8000-%012X", i)
		}
	}
	return json.Marshal(si)
}

// timing is one client's steps.
type timing struct {
	dhcp, tftp, script, kernel, initrd, answer, total time.Duration
}

// SourceAddr is client i's address in prefix p: its (i+1)th host
// address.
func SourceAddr(p netip.Prefix, i int) netip.Addr {
	a := p.Masked().Addr().As4()
	v := binary.BigEndian.Uint32(a[:]) + uint32(i) + 1
	binary.BigEndian.PutUint32(a[:], v)
	return netip.AddrFrom4(a)
}

// httpClient is client i's HTTP client: from its own source address when
// sources is set, else hc.
func httpClient(hc *http.Client, sources netip.Prefix, i int, timeout time.Duration) *http.Client {
	if !sources.IsValid() {
		return hc
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: SourceAddr(sources, i).AsSlice()}}
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: d.DialContext}}
}

func run(iface, server string, httpPort, n int, tmpl []byte, timeout time.Duration, sources netip.Prefix, prefer []string) (result, error) {
	conn, err := dhcpserver.Listen(iface, proxydhcp.DHCPClientPort)
	if err != nil {
		return result{}, err
	}
	defer conn.Close()
	// Each machine of a storm has its own NIC; the one socket that
	// stands in for all of them gets a burst of offers at once, which
	// the default receive buffer (about 90 offers) dropped, leaving the
	// machines to re-send their DISCOVERs a second later. As large a
	// buffer as the system allows (net.core.rmem_max).
	if u, ok := conn.(interface{ SetReadBuffer(int) error }); ok {
		if err := u.SetReadBuffer(16 << 20); err != nil {
			return result{}, fmt.Errorf("DHCP receive buffer: %w", err)
		}
	}

	// One DHCP socket for all clients: the receiver hands each offer to
	// the client with its transaction id.
	offers := make([]chan *dhcpv4.DHCPv4, n)
	bodies := make([][]byte, n)
	for i := range n {
		offers[i] = make(chan *dhcpv4.DHCPv4, 4)
		if bodies[i], err = body(tmpl, i); err != nil {
			return result{}, err
		}
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			m, _, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			o, err := dhcpv4.FromBytes(buf[:m])
			if err != nil || o.MessageType() != dhcpv4.MessageTypeOffer {
				continue
			}
			i := int(binary.BigEndian.Uint32(o.TransactionID[:]) - 0x57000000)
			if i >= 0 && i < n {
				select {
				case offers[i] <- o:
				default:
				}
			}
		}
	}()

	hc := &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	var (
		mu    sync.Mutex
		r     = result{Clients: n, ByServer: map[string]int{}}
		times []timing
		wg    sync.WaitGroup
		begin = make(chan struct{})
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		r.Failures++
		if len(r.Errors) < 10 {
			r.Errors = append(r.Errors, fmt.Sprintf(format, args...))
		}
	}
	for i := range n {
		wg.Go(func() {
			hc := httpClient(hc, sources, i, timeout)
			var xid dhcpv4.TransactionID
			binary.BigEndian.PutUint32(xid[:], 0x57000000+uint32(i))
			req, err := dhcpv4.NewDiscovery(MAC(i),
				dhcpv4.WithTransactionID(xid),
				dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
				dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64)),
				dhcpv4.WithBroadcast(true))
			if err != nil {
				fail("client %d: discover: %v", i, err)
				return
			}
			pkt := req.ToBytes()
			<-begin
			var t timing
			start := time.Now()
			// DHCP: a PXE ROM retransmits after 4 s; a shorter wait keeps a
			// lost packet from dominating the run while still showing it.
			var offer *dhcpv4.DHCPv4
			want := ""
			if len(prefer) > 0 {
				want = prefer[i%len(prefer)]
			}
			for try := 0; offer == nil && try < 4; try++ {
				if _, err := conn.WriteTo(pkt, &net.UDPAddr{IP: net.IPv4bcast, Port: proxydhcp.DHCPPort}); err != nil {
					fail("client %d: send discover: %v", i, err)
					return
				}
				offer = await(offers[i], want, time.Second)
			}
			if offer == nil {
				fail("client %d: no offer after 4 DISCOVERs", i)
				return
			}
			t.dhcp = time.Since(start)

			// TFTP of the offered boot file from the offered server.
			step := time.Now()
			next := server
			if ip := offer.ServerIPAddr; ip != nil && !ip.IsUnspecified() {
				next = ip.String()
			}
			base := fmt.Sprintf("http://%s", net.JoinHostPort(next, strconv.Itoa(httpPort)))
			srv, err := netip.ParseAddrPort(net.JoinHostPort(next, "69"))
			if err != nil {
				fail("client %d: tftp server %q: %v", i, next, err)
				return
			}
			// From the machine's own address, as its firmware would.
			o := tftpget.Options{BlockSize: 1468, Timeout: 2 * time.Second, Retries: 5}
			if sources.IsValid() {
				o.Local = SourceAddr(sources, i)
			}
			if _, err := tftpget.Get(srv, offer.BootFileName, o, io.Discard); err != nil {
				fail("client %d: tftp %q: %v", i, offer.BootFileName, err)
				return
			}
			t.tftp = time.Since(step)

			// The iPXE script, as the chain-loaded iPXE asks for it.
			step = time.Now()
			resp, err := hc.Get(base + "/boot.ipxe?mac=" + MAC(i).String() + "&platform=efi")
			if err != nil {
				fail("client %d: script: %v", i, err)
				return
			}
			script, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			// A boot script, not the exit script of a machine nothing waits for.
			if resp.StatusCode != http.StatusOK || !bytes.Contains(script, []byte("kernel http")) {
				fail("client %d: script: %s %q", i, resp.Status, script)
				return
			}
			t.script = time.Since(step)

			// The kernel and the initrd the script names.
			for _, what := range []string{"kernel", "initrd"} {
				step = time.Now()
				u := scriptURL(script, what)
				if u == "" {
					fail("client %d: the script names no %s URL", i, what)
					return
				}
				resp, err := hc.Get(u)
				if err != nil {
					fail("client %d: %s: %v", i, what, err)
					return
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || n == 0 {
					fail("client %d: %s: %s, %d bytes, %v", i, what, resp.Status, n, err)
					return
				}
				if what == "kernel" {
					t.kernel = time.Since(step)
				} else {
					t.initrd = time.Since(step)
				}
			}

			// The installer's request for its answer.
			step = time.Now()
			resp, err = hc.Post(base+"/answer", "application/json", bytes.NewReader(bodies[i]))
			if err != nil {
				fail("client %d: answer: %v", i, err)
				return
			}
			ans, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				fail("client %d: answer: %s %q", i, resp.Status, ans)
				return
			}
			t.answer = time.Since(step)
			t.total = time.Since(start)
			mu.Lock()
			r.OK++
			r.ByServer[next]++
			times = append(times, t)
			mu.Unlock()
		})
	}
	start := time.Now()
	close(begin)
	wg.Wait()
	r.Seconds = time.Since(start).Seconds()
	if len(times) > 0 {
		r.P50s = pct(times, 0.50, func(t timing) time.Duration { return t.total }).Seconds()
		r.P99s = pct(times, 0.99, func(t timing) time.Duration { return t.total }).Seconds()
		r.MaxS = pct(times, 1, func(t timing) time.Duration { return t.total }).Seconds()
		at := func(p float64) stages {
			ms := func(f func(timing) time.Duration) float64 {
				return float64(pct(times, p, f).Microseconds()) / 1000
			}
			return stages{
				DHCP:   ms(func(t timing) time.Duration { return t.dhcp }),
				TFTP:   ms(func(t timing) time.Duration { return t.tftp }),
				Script: ms(func(t timing) time.Duration { return t.script }),
				Kernel: ms(func(t timing) time.Duration { return t.kernel }),
				Initrd: ms(func(t timing) time.Duration { return t.initrd }),
				Answer: ms(func(t timing) time.Duration { return t.answer }),
			}
		}
		r.Stages50, r.Stages = at(0.50), at(0.99)
	}
	return r, nil
}

// await returns the offer from the server want (any when empty) that
// comes on ch within d, else the first other offer that came, else nil.
func await(ch <-chan *dhcpv4.DHCPv4, want string, d time.Duration) *dhcpv4.DHCPv4 {
	timer := time.NewTimer(d)
	defer timer.Stop()
	var first *dhcpv4.DHCPv4
	for {
		select {
		case o := <-ch:
			if want == "" || o.ServerIPAddr.String() == want {
				return o
			}
			if first == nil {
				first = o
			}
		case <-timer.C:
			return first
		}
	}
}

// pct is the p-th percentile (0..1) of one step over the clients.
func pct(ts []timing, p float64, f func(timing) time.Duration) time.Duration {
	d := make([]time.Duration, len(ts))
	for i, t := range ts {
		d[i] = f(t)
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(p*float64(len(d))))]
}

// scriptURL is the URL of the script's kernel or initrd line.
func scriptURL(script []byte, what string) string {
	for _, line := range strings.Split(string(script), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != what {
			continue
		}
		for _, w := range f[1:] {
			if strings.HasPrefix(w, "http://") || strings.HasPrefix(w, "https://") {
				return w
			}
		}
	}
	return ""
}
