package pxe

import (
	"encoding/json"
	"net/netip"
	"regexp"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/netboot"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
	"github.com/plasmactl/plasma-node/pxe/tftp"

	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"

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
	"github.com/plasmactl/plasma-node/pxe/events"
)

// labMAC is the booting machine's MAC: the one in the 9.2 system info
// the lab posts.
const labMAC = "52:54:00:ba:5e:11"

// labServerIP is the window's next-server address in the lab.
var labServerIP = netip.MustParseAddr("192.0.2.10")

// labSteps are the stages a full boot through the lab leaves in the
// node's timeline, in order.
var labSteps = []events.Kind{events.DHCPOffer, events.TFTP, events.Script, events.Kernel, events.Initrd, events.Answer, events.FirstBoot, events.Webhook}

// windowLab is a provisioning window as node-provisioner serve runs it
// (one [Server] over a state folder: proxy-DHCP, TFTP and HTTP, all on
// loopback), with three registrations: lab1 (pinned to labMAC) boots
// through it; lab2 stays pending; lab3 was consumed before.
type windowLab struct {
	base  string
	state string // the state folder
	// firstBootURL is lab1's, once install fetched it.
	firstBootURL string
	srv          *Server
	reg          *folder.Registrations
	secrets      *folder.Secrets
	dhcp         *net.UDPAddr
	tftp         string
	client       *net.UDPConn
	ttl          time.Duration

	mu      sync.Mutex
	pageGet func(n int) int // called before the n-th GET / is served; a status other than 0 is replied instead
	pages   int
}

// timeline is the window's boot timeline.
func (l *windowLab) timeline() *netboot.Timeline { return l.srv.Netboot().Timeline() }

func newWindowLab(t *testing.T) *windowLab {
	t.Helper()
	ctx := context.Background()
	state, ipxeSrc := t.TempDir(), t.TempDir()
	reg, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []registry.Registration{labReg(t, "lab1", "sda", labMAC), labReg(t, "lab2", "sdb", "52:54:00:77:00:20"), labReg(t, "lab3", "any")} {
		if _, err := reg.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reg.Consume(ctx, "lab3", registry.ConsumeRecord{Time: time.Now().Add(-time.Hour).UTC(), ClientIP: "10.77.0.130"}); err != nil {
		t.Fatal(err)
	}
	labRelease(t, state, "9.1-1")
	if err := os.WriteFile(filepath.Join(ipxeSrc, proxydhcp.SNPOnlyBinary), bytes.Repeat([]byte("iPXE"), 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	secretsDir := filepath.Join(t.TempDir(), "secrets")
	secrets, err := folder.OpenSecrets(secretsDir)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lab := &windowLab{base: "http://" + ln.Addr().String(), state: state, reg: reg, secrets: secrets, ttl: 30 * time.Minute}
	routes := map[string]http.Handler{"GET /{$}": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		lab.srv.Netboot().ServeHTTP(w, r)
	})}

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
	srv, err := New(nodeProvisioner(t, Config{
		StateDir: state, Listener: ln, TTL: lab.ttl, Routes: routes, BaseURL: lab.base,
		DHCPInterface: "lo", ServerIP: labServerIP, IPXEDir: ipxeSrc, DHCPConn: dc, TFTPConn: tc,
	}, secretsDir))
	if err != nil {
		t.Fatal(err)
	}
	srv.tweakDHCP = func(d *dhcpserver.Server) {
		d.Interface, d.PXEPort, d.ClientPort = "", -1, lab.client.LocalAddr().(*net.UDPAddr).Port
	}
	lab.srv = srv
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
	return lab
}

// labReg is a registration pinned to macs, if any.
func labReg(t testing.TB, name, disk string, macs ...string) registry.Registration {
	t.Helper()
	bd, err := registry.ParseBootDisk(disk)
	if err != nil {
		t.Fatal(err)
	}
	return registry.Registration{Name: name, MACs: macs, BootDisk: bd, Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// labRelease stages a release's kernel and initrd under state/assets/.
func labRelease(t testing.TB, state, release string) {
	t.Helper()
	dir := filepath.Join(state, bootassets.AssetsDir, release)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{bootassets.AssetKernel: []byte("kernel bytes"), bootassets.AssetNetbootInitrd: []byte("initrd bytes")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
		dhcpv4.WithClientIP(net.IPv4(127, 0, 0, 1)), dhcpv4.WithMessageType(dhcpv4.MessageTypeDiscover), dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")))
	if err != nil {
		t.Fatal(err)
	}
	offer := l.exchange(t, req)
	if offer.BootFileName != proxydhcp.SNPOnlyBinary {
		t.Fatalf("offered %q, want %s", offer.BootFileName, proxydhcp.SNPOnlyBinary)
	}
	// The server records the offer after sending it; firmware takes
	// longer than this wait to start TFTP.
	l.waitFor(t, events.DHCPOffer)
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
	l.waitFor(t, events.TFTP)
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
func (l *windowLab) waitFor(t testing.TB, stage events.Kind) {
	t.Helper()
	has := func(evs []netboot.BootEvent) bool {
		return slices.ContainsFunc(evs, func(e netboot.BootEvent) bool { return e.Stage == stage })
	}
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		snap := l.timeline().Snapshot()
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
	sysinfo, err := os.ReadFile(filepath.Join("..", "answer", "testdata", "sysinfo", "pve-9.2-synthetic.json"))
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
	l.firstBootURL = a.FirstBoot.URL
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

// strays sends, from lab1's address, what a confused client or a replay
// sends once lab1 is installed: its one-shot first-boot URL again (404),
// a system-info body that is not JSON (400) and a GET of the answer URL
// (405). It returns the words of the 400 and 405 as the page shows them.
func (l *windowLab) strays(t testing.TB) []string {
	t.Helper()
	if l.firstBootURL == "" {
		t.Fatal("lab1 fetched no first-boot script")
	}
	for _, r := range []struct {
		method, url, body string
		status            int
	}{
		{"GET", l.firstBootURL, "", http.StatusNotFound},
		{"POST", l.base + "/answer", "{not json", http.StatusBadRequest},
		{"GET", l.base + "/answer", "", http.StatusMethodNotAllowed},
	} {
		req, _ := http.NewRequest(r.method, r.url, strings.NewReader(r.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != r.status {
			t.Fatalf("%s %s = %d, want %d", r.method, r.url, resp.StatusCode, r.status)
		}
	}
	return []string{"answer refused (400)", "answer refused (405)"}
}

func stagesOf(evs []netboot.BootEvent) []events.Kind {
	var out []events.Kind
	for _, e := range evs {
		out = append(out, e.Stage)
	}
	return out
}

func TestStatusPageAfterAFullBootShowsEveryStepAndNoSecret(t *testing.T) {
	lab := newWindowLab(t)
	lab.netboot(t)
	pw := lab.install(t)

	statusJSON := lab.do(t, "GET", lab.base+"/status", "")
	var rep netboot.StatusReport
	if err := json.Unmarshal([]byte(statusJSON), &rep); err != nil {
		t.Fatal(err)
	}
	// The boot handler's GET /status took over the answer handler's and
	// keeps its fields.
	var raw struct {
		Nodes []map[string]any `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(statusJSON), &raw); err != nil || len(raw.Nodes) == 0 {
		t.Fatalf("GET /status: %v\n%s", err, statusJSON)
	}
	for _, k := range []string{"name", "state", "macs", "boot_disk", "pools", "created", "timeline"} {
		if _, ok := raw.Nodes[0][k]; !ok {
			t.Errorf("GET /status: nodes lack %q:\n%s", k, statusJSON)
		}
	}
	states := map[string]string{}
	for _, n := range rep.Nodes {
		states[n.Name] = n.State
		if n.Name == "lab1" {
			if diff := cmp.Diff(labSteps, stagesOf(n.Timeline)); diff != "" {
				t.Errorf("lab1's timeline in GET /status (-want +got):\n%s", diff)
			}
		}
	}
	if diff := cmp.Diff(map[string]string{"lab1": "installed", "lab2": "pending", "lab3": "consumed"}, states); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if l := rep.Window.LeftSeconds; !rep.Window.Open || l == nil || *l <= 0 || *l > int64(lab.ttl/time.Second) {
		t.Errorf("window = %+v, want open with at most %s left", rep.Window, lab.ttl)
	}

	page := lab.do(t, "GET", lab.base+"/", "")
	for path, body := range map[string]string{"/": page, "/status": lab.do(t, "GET", lab.base+"/status", ""), "/timeline": lab.do(t, "GET", lab.base+"/timeline", "")} {
		if strings.Contains(body, pw) {
			t.Errorf("GET %s holds the generated root password", path)
		}
	}
	var order []string
	for _, m := range regexp.MustCompile(`<tr data-stage="([^"]+)">`).FindAllStringSubmatch(nodeSection(t, page, "lab1"), -1) {
		order = append(order, m[1])
	}
	want := make([]string, len(labSteps))
	for i, s := range labSteps {
		want[i] = string(s)
	}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("lab1's rows on the page (-want +got):\n%s", diff)
	}
}

// nodeSection cuts a node's section out of the page.
func nodeSection(t *testing.T, page, node string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `<section class="node" id="node-`+node+`"`)
	section, _, closed := strings.Cut(rest, "</section>")
	if !ok || !closed {
		t.Fatalf("the page has no section for %s", node)
	}
	return section
}
