package pxe

import (
	"github.com/plasmactl/plasma-node/answer/registry"

	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	pintftp "github.com/pin/tftp/v3"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
	"github.com/plasmactl/plasma-node/pxe/tftp"
)

// labMAC is the booting machine's MAC: the one in the 9.2 system info
// the lab posts.
const labMAC = "52:54:00:ba:5e:11"

// labSteps are the stages a full boot through the lab leaves in the
// node's timeline, in order.
var labSteps = []Stage{StageDHCPOffer, StageTFTP, StageScript, StageKernel, StageInitrd, StageAnswer, StageFirstBoot, StageWebhook}

// windowLab is a provisioning window as node-provisioner serve runs it
// (a [Server] with a [BootHandler], an [answer.Handler], proxy-DHCP and
// TFTP, all on loopback), with three registrations: lab1 (pinned to
// labMAC) boots through it; lab2 stays pending; lab3 was consumed before.
type windowLab struct {
	base    string
	boot    *Handler
	reg     *registry.Store
	secrets *registry.SecretStore
	dhcp    *net.UDPAddr
	tftp    string
	client  *net.UDPConn
	ttl     time.Duration

	mu      sync.Mutex
	pageGet func(n int) int // called before the n-th GET / is served; a status other than 0 is replied instead
	pages   int
}

func newWindowLab(t *testing.T) *windowLab {
	t.Helper()
	ctx := context.Background()
	state, tftpRoot := t.TempDir(), t.TempDir()
	reg, err := registry.Open(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []registry.Registration{testReg(t, "lab1", "sda", labMAC), testReg(t, "lab2", "sdb", testMAC2), testReg(t, "lab3", "any")} {
		if _, err := reg.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reg.Consume(ctx, "lab3", registry.ConsumeRecord{Time: time.Now().Add(-time.Hour).UTC(), ClientIP: "10.77.0.130"}); err != nil {
		t.Fatal(err)
	}
	stageRelease(t, state, "9.1-1")
	if err := os.WriteFile(filepath.Join(tftpRoot, proxydhcp.UEFIBinary), bytes.Repeat([]byte("iPXE"), 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	secrets, err := registry.OpenSecretStore(filepath.Join(t.TempDir(), "secrets"))
	if err != nil {
		t.Fatal(err)
	}
	ah, err := registry.NewHandler(answer.HandlerConfig{Registry: reg, Secrets: secrets, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ah.Close() })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lab := &windowLab{base: "http://" + ln.Addr().String(), reg: reg, secrets: secrets, ttl: 30 * time.Minute}
	lab.boot, err = New(Config{Registry: reg, StateDir: state, BaseURL: lab.base})
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]http.Handler{}
	for _, p := range lab.boot.Patterns() {
		routes[p] = lab.boot
	}
	routes["GET /{$}"] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lab.mu.Lock()
		lab.pages++
		n, hook := lab.pages, lab.pageGet
		lab.mu.Unlock()
		if hook != nil {
			if code := hook(n); code != 0 {
				http.Error(w, "provisioning window closed", code)
				return
			}
		}
		lab.boot.ServeHTTP(w, r)
	})
	for _, p := range ah.Patterns() {
		routes[p] = lab.boot.Metrics().CountAnswers(ah)
	}

	// Plain loopback sockets: the test's DISCOVER carries ciaddr, so the
	// offer is unicast and needs neither root nor a bound interface.
	dc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lab.dhcp = dc.LocalAddr().(*net.UDPAddr)
	lab.client, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lab.client.Close() })
	tc, err := tftp.Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lab.tftp = tc.LocalAddr().String()
	srv, err := New(Config{
		Listener: ln, TTL: lab.ttl, Routes: routes,
		DHCP: &dhcpserver.Server{Proxy: proxydhcp.Config{ServerIP: testServerIP, Boot: proxydhcp.BootConfig{ScriptURL: lab.base + "/boot.ipxe"}},
			Allow: PendingAllow(reg, 0, nil), DHCPConn: dc, PXEPort: -1, ClientPort: lab.client.LocalAddr().(*net.UDPAddr).Port, OnEvent: lab.boot.DHCPEvent},
		TFTP: &tftp.Server{Root: tftpRoot, Conn: tc, OnEvent: lab.boot.TFTPEvent},
	})
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(sctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-errc:
		case <-time.After(10 * time.Second):
			t.Error("the window did not close")
		}
	})
	select {
	case <-srv.Ready():
	case err := <-errc:
		t.Fatal(err)
	}
	lab.boot.Metrics().SetWindow(true, time.Now().Add(lab.ttl))
	return lab
}

// onPage sets a function called before each GET / is served, with its
// number (1 for the first); when it returns a status other than 0, that
// is the reply.
func (l *windowLab) onPage(f func(n int) int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pageGet = f
}

func (l *windowLab) do(t testing.TB, method, url, body string) string {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s = %d %s", method, url, resp.StatusCode, b)
	}
	return string(b)
}

// netboot drives lab1's network boot as its firmware and iPXE would: a
// PXE DISCOVER to the proxy-DHCP server, the TFTP download of the boot
// file it offers, the iPXE script, and the kernel and initrd it names.
func (l *windowLab) netboot(t testing.TB) {
	t.Helper()
	mac, _ := net.ParseMAC(labMAC)
	req, err := dhcpv4.New(dhcpv4.WithTransactionID(dhcpv4.TransactionID{0, 0, 0x5e, 0x11}), dhcpv4.WithHwAddr(mac),
		dhcpv4.WithClientIP(net.IPv4(127, 0, 0, 1)), dhcpv4.WithMessageType(dhcpv4.MessageTypeDiscover), class("PXEClient:Arch:00007:UNDI:003016"))
	if err != nil {
		t.Fatal(err)
	}
	offer := l.exchange(t, req)
	if offer.BootFileName != proxydhcp.UEFIBinary {
		t.Fatalf("offered %q, want %s", offer.BootFileName, proxydhcp.UEFIBinary)
	}
	// The server records the offer after sending it; firmware takes
	// longer than this wait to start TFTP.
	l.waitFor(t, StageDHCPOffer)
	c, err := pintftp.NewClient(l.tftp)
	if err != nil {
		t.Fatal(err)
	}
	c.SetTimeout(2 * time.Second)
	wt, err := c.Receive(offer.BootFileName, "octet")
	if err != nil {
		t.Fatalf("TFTP %s: %v", offer.BootFileName, err)
	}
	if _, err := wt.WriteTo(io.Discard); err != nil {
		t.Fatalf("TFTP %s: %v", offer.BootFileName, err)
	}
	// The server records the download once the last ACK is in, which
	// may be after the client has it; iPXE takes longer to start than
	// this wait.
	l.waitFor(t, StageTFTP)
	script := l.do(t, "GET", l.base+"/boot.ipxe?mac="+labMAC+"&platform=efi", "")
	var got int
	for line := range strings.Lines(script) {
		f := strings.Fields(line)
		for _, w := range f {
			if strings.HasPrefix(w, l.base+"/assets/") && (f[0] == "kernel" || f[0] == "initrd") {
				l.do(t, "GET", w, "")
				got++
			}
		}
	}
	if got != 2 {
		t.Fatalf("the script names %d assets, want a kernel and an initrd:\n%s", got, script)
	}
}

// waitFor waits until the timeline holds an event of stage.
func (l *windowLab) waitFor(t testing.TB, stage Stage) {
	t.Helper()
	has := func(evs []BootEvent) bool {
		return slices.ContainsFunc(evs, func(e BootEvent) bool { return e.Stage == stage })
	}
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		snap := l.boot.Timeline().Snapshot()
		if has(snap.Other) || slices.ContainsFunc(slices.Collect(maps.Values(snap.Nodes)), has) || slices.ContainsFunc(slices.Collect(maps.Values(snap.Unmatched)), has) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event in the timeline", stage)
		}
	}
}

// exchange sends a DHCP request until its reply arrives.
func (l *windowLab) exchange(t testing.TB, req *dhcpv4.DHCPv4) *dhcpv4.DHCPv4 {
	t.Helper()
	buf := make([]byte, 2048)
	for range 20 {
		if _, err := l.client.WriteToUDP(req.ToBytes(), l.dhcp); err != nil {
			t.Fatal(err)
		}
		l.client.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, _, err := l.client.ReadFromUDP(buf)
		if err != nil {
			continue
		}
		if resp, err := dhcpv4.FromBytes(buf[:n]); err == nil && resp.TransactionID == req.TransactionID {
			return resp
		}
	}
	t.Fatal("no DHCP offer")
	return nil
}

// install drives lab1's installer: POST /answer with its system info,
// the first-boot script, and the webhook. It returns the root password
// the answer server generated.
func (l *windowLab) install(t testing.TB) string {
	t.Helper()
	sysinfo, err := os.ReadFile(filepath.Join("..", "..", "answer", "testdata", "sysinfo", "pve-9.2-synthetic.json"))
	if err != nil {
		t.Fatal(err)
	}
	toml := l.do(t, "POST", l.base+"/answer", string(sysinfo))
	a, err := answer.Decode([]byte(toml), answer.Version92)
	if err != nil {
		t.Fatalf("answer: %v\n%s", err, toml)
	}
	if a.FirstBoot == nil || a.PostInstallationWebhook == nil {
		t.Fatalf("the answer has no first-boot or webhook URL:\n%s", toml)
	}
	l.do(t, "GET", a.FirstBoot.URL, "")
	l.do(t, "POST", a.PostInstallationWebhook.URL, `{"fqdn":"lab1.example.test"}`)
	pw, err := os.ReadFile(l.secrets.PasswordPath("lab1"))
	if err != nil {
		t.Fatal(err)
	}
	p := strings.TrimSpace(string(pw))
	if len(p) < 12 {
		t.Fatalf("generated password %d characters long, want a real one", len(p))
	}
	return p
}

func stagesOf(evs []BootEvent) []Stage {
	var out []Stage
	for _, e := range evs {
		out = append(out, e.Stage)
	}
	return out
}
