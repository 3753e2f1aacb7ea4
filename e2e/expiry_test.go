package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"github.com/plasmactl/plasma-node/internal/netnstest"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/pin/tftp/v3"

	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

// The expiry lab, apart from the netboot lab so that both can exist.
var expiryLab = netnstest.Lab{Client: "pn-exp-client", Server: "pn-exp-server", VethA: "pn-exp-a", VethB: "pn-exp-b",
	ClientCIDR: "10.79.0.100/24", ServerCIDR: "10.79.0.2/24"}

const (
	expiryServer = "10.79.0.2"
	expiryMAC    = "52:54:00:79:00:10"
	expiryTTL    = 3 * time.Second
	// expiryQuiet is how soon after the TTL every service must be silent.
	expiryQuiet = time.Second
	// expiryBigTFTP and expiryBigHTTP are the sizes of the files the long
	// downloads fetch, at a pace that cannot finish within the window.
	expiryBigTFTP = 64 << 20
	expiryBigHTTP = 1 << 30
	// expiryPace is how fast the long downloads read, in bytes a second.
	expiryPace = 2 << 20
)

// probeConfig tells the prober (this test binary, run in the client
// namespace with PN_E2E_PROBE set) what to do.
type probeConfig struct {
	Iface, Server, MAC string
	// ProbeUntil ends the probing; WaitUntil the wait for the long
	// downloads (Unix nanoseconds).
	ProbeUntil, WaitUntil int64
}

// probeSeries is what one service answered over the run.
type probeSeries struct {
	Tries, OK      int
	FirstOK        int64
	LastOK         int64
	FailedAfterOK  int
	LastTry, Error string
}

// download is one long download.
type download struct {
	Bytes          int64
	Started, Ended int64
	Err            string
}

// probeResult is the prober's report.
type probeResult struct {
	Services  map[string]*probeSeries
	Downloads map[string]*download
	Errors    []string
}

// TestWindowExpiryStopsEveryService opens a window with a 3 s TTL in a
// namespace pair, with proxy-DHCP, TFTP and HTTP. A client in the other
// namespace starts a long TFTP and a long HTTP download, then asks each
// service again and again: each answers while the window is open and none
// answers a new request later than 1 s after the TTL, while the long
// downloads are still running. The long downloads are cut off (or finish)
// and the server exits.
func TestWindowExpiryStopsEveryService(t *testing.T) {
	expiryLab.Create(t)
	state := t.TempDir()
	// A staged release whose initrd is a big sparse file, and iPXE
	// binaries of which snponly.efi is big.
	rel := filepath.Join(state, "assets", "9.2-1")
	ipxeDir := filepath.Join(state, "ipxe-src")
	for _, d := range []string{rel, ipxeDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeSized(t, filepath.Join(rel, bootassets.AssetKernel), 4096)
	writeSized(t, filepath.Join(rel, bootassets.AssetNetbootInitrd), expiryBigHTTP)
	writeSized(t, filepath.Join(ipxeDir, proxydhcp.BIOSBinary), 4096)
	writeSized(t, filepath.Join(ipxeDir, proxydhcp.UEFIBinary), 4096)
	writeSized(t, filepath.Join(ipxeDir, proxydhcp.SNPOnlyBinary), expiryBigTFTP)

	np := filepath.Join(bin, "node-provisioner")
	if out, err := exec.Command(np, "--state-dir", state, "register", "exp1", "--mac", expiryMAC, "--boot-disk", "vda").CombinedOutput(); err != nil {
		t.Fatalf("register: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	serve := exec.CommandContext(ctx, "ip", "netns", "exec", expiryLab.Server, np, "--state-dir", state, "--secrets-dir", filepath.Join(state, "secrets"),
		"--log-format", "json", "serve", "--http", expiryServer+":8090", "--ttl", expiryTTL.String(),
		"--dhcp-interface", expiryLab.VethB, "--ipxe-dir", ipxeDir)
	logs := &lockedBuffer{}
	serve.Stdout, serve.Stderr = logs, logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- serve.Wait() }()
	defer func() {
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	}()
	var opened time.Time
	waitFor(t, 10*time.Second, func() bool {
		opened = logTime(logs.String(), "provisioning window open")
		return !opened.IsZero()
	})
	expiry := opened.Add(expiryTTL)

	cfg := probeConfig{Iface: expiryLab.VethA, Server: expiryServer, MAC: expiryMAC,
		ProbeUntil: expiry.Add(3 * time.Second).UnixNano(), WaitUntil: expiry.Add(10 * time.Second).UnixNano()}
	env, _ := json.Marshal(cfg)
	probe := exec.CommandContext(ctx, "ip", "netns", "exec", expiryLab.Client, os.Args[0], "-test.run", "^$")
	probe.Env = append(os.Environ(), "PN_E2E_PROBE="+string(env))
	out, err := probe.Output()
	if err != nil {
		t.Fatalf("prober: %v\n%s", err, out)
	}
	var res probeResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("prober output %q: %v", out, err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("prober: %v", res.Errors)
	}
	at := func(ns int64) string {
		if ns == 0 {
			return "never"
		}
		return fmt.Sprintf("%+.3fs", time.Unix(0, ns).Sub(expiry).Seconds())
	}
	for _, name := range []string{"dhcp", "tftp", "http"} {
		s := res.Services[name]
		if s == nil {
			t.Fatalf("no %s results", name)
		}
		t.Logf("%s: %d of %d requests answered, first %s, last %s after the TTL; %d unanswered after the last (last error: %s)",
			name, s.OK, s.Tries, at(s.FirstOK), at(s.LastOK), s.FailedAfterOK, s.Error)
		if s.OK == 0 || time.Unix(0, s.FirstOK).After(expiry) {
			t.Errorf("%s never answered while the window was open", name)
			continue
		}
		if last := time.Unix(0, s.LastOK); last.After(expiry.Add(expiryQuiet)) {
			t.Errorf("%s answered a new request %v after the TTL, want silence within %v", name, last.Sub(expiry), expiryQuiet)
		}
		if s.FailedAfterOK < 3 {
			t.Errorf("%s: only %d requests tried after its last answer, want several", name, s.FailedAfterOK)
		}
	}
	for _, name := range []string{"tftp", "http"} {
		d := res.Downloads[name]
		if d == nil {
			t.Fatalf("no %s download result", name)
		}
		t.Logf("long %s download: %d bytes, started %s, ended %s after the TTL (%s)", name, d.Bytes, at(d.Started), at(d.Ended), d.Err)
		if d.Started == 0 || time.Unix(0, d.Started).After(expiry) || d.Bytes == 0 {
			t.Errorf("long %s download did not run in the window", name)
		}
		if d.Ended == 0 {
			t.Errorf("long %s download still running at %s", name, at(cfg.WaitUntil))
		} else if time.Unix(0, d.Ended).Before(expiry) {
			t.Errorf("long %s download ended before the TTL (%s), so it did not overlap the expiry", name, d.Err)
		}
	}
	select {
	case <-served:
		if d := time.Since(expiry); d > 8*time.Second {
			t.Errorf("serve exited %v after the TTL", d)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("serve still running 10 s after the prober ended")
		serve.Process.Kill()
		<-served
	}
}

// writeSized creates a sparse file of size bytes.
func writeSized(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// logTime returns the time of the first JSON log line with message msg.
func logTime(logs, msg string) time.Time {
	s := bufio.NewScanner(strings.NewReader(logs))
	for s.Scan() {
		var l struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal(s.Bytes(), &l) == nil && l.Msg == msg {
			return l.Time
		}
	}
	return time.Time{}
}

// pacedWriter discards what it is given at expiryPace, so a download
// into it takes long.
type pacedWriter struct {
	mu    sync.Mutex
	n     int64
	start time.Time
}

func (w *pacedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.n += int64(len(p))
	due := w.start.Add(time.Duration(float64(w.n) / expiryPace * float64(time.Second)))
	w.mu.Unlock()
	time.Sleep(time.Until(due))
	return len(p), nil
}

func (w *pacedWriter) bytes() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// runProber is the client side of TestWindowExpiryStopsEveryService.
func runProber(cfg probeConfig) probeResult {
	res := probeResult{Services: map[string]*probeSeries{}, Downloads: map[string]*download{}}
	var mu sync.Mutex
	fail := func(format string, args ...any) {
		mu.Lock()
		res.Errors = append(res.Errors, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	mac, err := net.ParseMAC(cfg.MAC)
	if err != nil {
		fail("mac: %v", err)
		return res
	}
	dconn, err := dhcpserver.Listen(cfg.Iface, proxydhcp.DHCPClientPort)
	if err != nil {
		fail("listen: %v", err)
		return res
	}
	defer dconn.Close()

	var downloads sync.WaitGroup
	longTFTP := &download{Started: time.Now().UnixNano()}
	res.Downloads["tftp"] = longTFTP
	downloads.Go(func() {
		w := &pacedWriter{start: time.Now()}
		var result string
		defer func() {
			mu.Lock()
			longTFTP.Bytes, longTFTP.Ended, longTFTP.Err = w.bytes(), time.Now().UnixNano(), result
			mu.Unlock()
		}()
		c, err := tftp.NewClient(net.JoinHostPort(cfg.Server, "69"))
		if err != nil {
			result = err.Error()
			return
		}
		c.SetTimeout(time.Second)
		c.SetRetries(2)
		c.SetBlockSize(1468)
		wt, err := c.Receive(proxydhcp.SNPOnlyBinary, "octet")
		if err != nil {
			result = err.Error()
			return
		}
		if _, err := wt.WriteTo(w); err != nil {
			result = err.Error()
		} else {
			result = "finished"
		}
	})
	longHTTP := &download{Started: time.Now().UnixNano()}
	res.Downloads["http"] = longHTTP
	downloads.Go(func() {
		w := &pacedWriter{start: time.Now()}
		var result string
		defer func() {
			mu.Lock()
			longHTTP.Bytes, longHTTP.Ended, longHTTP.Err = w.bytes(), time.Now().UnixNano(), result
			mu.Unlock()
		}()
		resp, err := http.Get("http://" + net.JoinHostPort(cfg.Server, "8090") + "/assets/9.2-1/" + bootassets.AssetNetbootInitrd)
		if err != nil {
			result = err.Error()
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			result = resp.Status
			return
		}
		if _, err := io.Copy(w, resp.Body); err != nil {
			result = err.Error()
		} else {
			result = "finished"
		}
	})

	hc := &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	probes := map[string]func() error{
		"dhcp": func() error { return probeDHCP(dconn, mac) },
		"tftp": func() error { return probeTFTP(cfg.Server) },
		"http": func() error { return probeHTTP(hc, cfg.Server, cfg.MAC) },
	}
	for name := range probes {
		res.Services[name] = &probeSeries{}
	}
	for time.Now().UnixNano() < cfg.ProbeUntil {
		for _, name := range []string{"dhcp", "tftp", "http"} {
			s := res.Services[name]
			s.Tries++
			if err := probes[name](); err != nil {
				s.Error = err.Error()
				if s.OK > 0 {
					s.FailedAfterOK++
				}
				continue
			}
			now := time.Now().UnixNano()
			if s.OK == 0 {
				s.FirstOK = now
			}
			s.OK++
			s.LastOK, s.FailedAfterOK = now, 0
		}
		time.Sleep(50 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { downloads.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Until(time.Unix(0, cfg.WaitUntil))):
	}
	mu.Lock()
	defer mu.Unlock()
	out := res
	out.Downloads = map[string]*download{}
	for k, v := range res.Downloads {
		c := *v
		out.Downloads[k] = &c
	}
	return out
}

// probeDHCP broadcasts a PXE DISCOVER and waits briefly for its offer.
func probeDHCP(conn net.PacketConn, mac net.HardwareAddr) error {
	req, err := dhcpv4.NewDiscovery(mac,
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64)),
		dhcpv4.WithBroadcast(true))
	if err != nil {
		return err
	}
	if _, err := conn.WriteTo(req.ToBytes(), &net.UDPAddr{IP: net.IPv4bcast, Port: 67}); err != nil {
		return err
	}
	conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	buf := make([]byte, 1500)
	for {
		n, _, err := conn.ReadFrom(buf)
		if err != nil {
			return fmt.Errorf("no offer: %w", err)
		}
		if o, err := dhcpv4.FromBytes(buf[:n]); err == nil && o.TransactionID == req.TransactionID && o.MessageType() == dhcpv4.MessageTypeOffer {
			return nil
		}
	}
}

// probeTFTP sends a read request for a small file and waits briefly for
// its first block (or option acknowledgement), then abandons the
// transfer.
func probeTFTP(server string) error {
	c, err := net.ListenUDP("udp4", nil)
	if err != nil {
		return err
	}
	defer c.Close()
	var rrq bytes.Buffer
	binary.Write(&rrq, binary.BigEndian, uint16(1))
	rrq.WriteString(proxydhcp.UEFIBinary + "\x00octet\x00")
	if _, err := c.WriteTo(rrq.Bytes(), &net.UDPAddr{IP: net.ParseIP(server), Port: 69}); err != nil {
		return err
	}
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	buf := make([]byte, 1600)
	n, from, err := c.ReadFrom(buf)
	if err != nil {
		return fmt.Errorf("no block: %w", err)
	}
	if n < 2 {
		return fmt.Errorf("short reply of %d bytes", n)
	}
	op := binary.BigEndian.Uint16(buf)
	// Abandon the transfer: ERROR 0.
	c.WriteTo([]byte{0, 5, 0, 0, 'p', 'r', 'o', 'b', 'e', 0}, from)
	if op != 3 && op != 6 {
		return fmt.Errorf("reply opcode %d", op)
	}
	return nil
}

// probeHTTP asks for the boot script on a new connection.
func probeHTTP(hc *http.Client, server, mac string) error {
	resp, err := hc.Get("http://" + net.JoinHostPort(server, "8090") + "/boot.ipxe?mac=" + mac + "&platform=efi")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(b), "#!ipxe") {
		return fmt.Errorf("%s", resp.Status)
	}
	return nil
}
