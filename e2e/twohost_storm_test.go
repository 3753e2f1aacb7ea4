package e2e

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/pin/tftp/v3"

	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
)

// The emulated storm: machines that boot as a UEFI machine does, in the
// two-host lab's client namespace (this test binary, run there with
// PN_E2E_STORM set): a broadcast DISCOVER taking the first proxy offer
// (whichever host's), the TFTP download of its boot file from its
// next-server, the iPXE script, the kernel and initrd the script names,
// and the installer's POST of its system info to the host it booted from.
// A boot that fails at any step is retried from the DISCOVER, as a
// machine that reboots, up to its attempts. Each step is one JSON line on
// stdout, for the test to follow as it happens.

// stormConfig tells the storm what to do.
type stormConfig struct {
	Iface    string
	HTTPPort int
	// MACs are the machines, one each; machine i's HTTP requests come
	// from SourceBase + i.
	MACs       []string
	SourceBase string // "10.77.30." and the first host number
	SourceFrom int
	// Stagger is the time between two machines' power-on.
	Stagger time.Duration
	// Attempts is how many boots a machine tries.
	Attempts int
	// Tokens are the answer token of each host's boot assets, by the
	// host's address (the one its offers name).
	Tokens map[string]string
	// SysInfo is the system info whose MAC (52:54:00:BA:5E:11) each
	// machine replaces with its own.
	SysInfo []byte
}

// stormEvent is one line of the storm's output.
type stormEvent struct {
	Machine int    `json:"m"`
	Event   string `json:"ev"` // offer, answering, installed, failed, gave-up, done
	Host    string `json:"host,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	Err     string `json:"err,omitempty"`
	At      int64  `json:"at"`
}

// runStorm is the storm's side, in the client namespace.
func runStorm(raw string) int {
	var cfg stormConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "PN_E2E_STORM:", err)
		return 2
	}
	conn, err := dhcpserver.Listen(cfg.Iface, 68)
	if err != nil {
		fmt.Fprintln(os.Stderr, "storm: listen:", err)
		return 1
	}
	defer conn.Close()
	var mu sync.Mutex
	enc := json.NewEncoder(os.Stdout)
	emit := func(e stormEvent) {
		e.At = time.Now().UnixNano()
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(e)
	}
	// One DHCP socket: its reader hands each offer to the machine whose
	// transaction id it carries (0x5E000000 + machine * 256 + attempt).
	offers := make([]chan *dhcpv4.DHCPv4, len(cfg.MACs))
	for i := range offers {
		offers[i] = make(chan *dhcpv4.DHCPv4, 8)
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, _, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			o, err := dhcpv4.FromBytes(buf[:n])
			if err != nil || o.MessageType() != dhcpv4.MessageTypeOffer || o.BootFileName == "" {
				continue // the site's own offers name no boot file
			}
			i := int(binary.BigEndian.Uint32(o.TransactionID[:])-0x5E000000) >> 8
			if i >= 0 && i < len(offers) {
				select {
				case offers[i] <- o:
				default:
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for i := range cfg.MACs {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * cfg.Stagger)
			m := stormMachine{cfg: cfg, i: i, conn: conn, offers: offers[i]}
			for attempt := 1; attempt <= cfg.Attempts; attempt++ {
				host, err := m.boot(attempt, emit)
				if err == nil {
					emit(stormEvent{Machine: i, Event: "installed", Host: host, Attempt: attempt})
					return
				}
				emit(stormEvent{Machine: i, Event: "failed", Host: host, Attempt: attempt, Err: err.Error()})
				time.Sleep(time.Second)
			}
			emit(stormEvent{Machine: i, Event: "gave-up"})
		})
	}
	wg.Wait()
	emit(stormEvent{Machine: -1, Event: "done"})
	return 0
}

// stormMachine is one emulated machine.
type stormMachine struct {
	cfg    stormConfig
	i      int
	conn   net.PacketConn
	offers chan *dhcpv4.DHCPv4
}

// boot is one boot of the machine, from power-on to its answer; it
// returns the host it booted from.
func (m stormMachine) boot(attempt int, emit func(stormEvent)) (string, error) {
	mac, err := net.ParseMAC(m.cfg.MACs[m.i])
	if err != nil {
		return "", err
	}
	var xid dhcpv4.TransactionID
	binary.BigEndian.PutUint32(xid[:], 0x5E000000+uint32(m.i)<<8+uint32(attempt))
	req, err := dhcpv4.NewDiscovery(mac, dhcpv4.WithTransactionID(xid),
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64)), dhcpv4.WithBroadcast(true))
	if err != nil {
		return "", err
	}
	var offer *dhcpv4.DHCPv4
	for try := 0; offer == nil && try < 4; try++ {
		if _, err := m.conn.WriteTo(req.ToBytes(), &net.UDPAddr{IP: net.IPv4bcast, Port: 67}); err != nil {
			return "", fmt.Errorf("discover: %w", err)
		}
		end := time.After(time.Second)
	wait:
		for {
			select {
			case o := <-m.offers:
				if o.TransactionID == xid {
					offer = o
					break wait
				}
			case <-end:
				break wait
			}
		}
	}
	if offer == nil {
		return "", fmt.Errorf("no proxy offer after 4 DISCOVERs")
	}
	host := offer.ServerIPAddr.String()
	emit(stormEvent{Machine: m.i, Event: "offer", Host: host, Attempt: attempt})
	return host, m.fetch(host, offer.BootFileName, func() {
		emit(stormEvent{Machine: m.i, Event: "answering", Host: host, Attempt: attempt})
	})
}

// fetch is the boot's downloads and its answer, from host; answering is
// called as the installer asks for its answer.
func (m stormMachine) fetch(host, file string, answering func()) error {
	tc, err := tftp.NewClient(net.JoinHostPort(host, "69"))
	if err != nil {
		return fmt.Errorf("tftp: %w", err)
	}
	tc.SetTimeout(time.Second)
	tc.SetRetries(3)
	wt, err := tc.Receive(file, "octet")
	if err != nil {
		return fmt.Errorf("tftp %s: %w", file, err)
	}
	if _, err := wt.WriteTo(io.Discard); err != nil {
		return fmt.Errorf("tftp %s: %w", file, err)
	}
	src := net.ParseIP(fmt.Sprintf("%s%d", m.cfg.SourceBase, m.cfg.SourceFrom+m.i))
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: src}}
	hc := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
	base := fmt.Sprintf("http://%s", net.JoinHostPort(host, fmt.Sprint(m.cfg.HTTPPort)))
	script, err := get(hc, base+"/boot.ipxe?mac="+m.cfg.MACs[m.i]+"&platform=efi")
	if err != nil {
		return fmt.Errorf("script: %w", err)
	}
	if !bytes.Contains(script, []byte("kernel http")) {
		return fmt.Errorf("script: not an install script: %q", script)
	}
	for _, what := range []string{"kernel", "initrd"} {
		u := scriptLineURL(script, what)
		if u == "" {
			return fmt.Errorf("the script names no %s URL: %q", what, script)
		}
		if _, err := get(hc, u); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	body := bytes.ReplaceAll(m.cfg.SysInfo, []byte("52:54:00:BA:5E:11"), []byte(strings.ToUpper(m.cfg.MACs[m.i])))
	req, err := http.NewRequest(http.MethodPost, base+"/answer", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+m.cfg.Tokens[host])
	answering()
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("answer: %s %q", resp.Status, b)
	}
	return nil
}

// get reads url whole; anything but a 200 is an error.
func get(hc *http.Client, url string) ([]byte, error) {
	resp, err := hc.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s", resp.Status)
	}
	return b, err
}

// scriptLineURL is the URL on the script's kernel or initrd line.
func scriptLineURL(script []byte, what string) string {
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

// stormRun is a storm started in the client namespace.
type stormRun struct {
	cmd    *exec.Cmd
	events chan stormEvent
	stderr *lockedBuffer
}

// startStorm starts machines in the lab's client namespace; its events
// come on the run's channel, which is closed when the storm ends.
func (l *twoHostLab) startStorm(t *testing.T, cfg stormConfig) (*stormRun, error) {
	t.Helper()
	cfg.Tokens = map[string]string{l.a.ip: l.a.token(t), l.b.ip: l.b.token(t)}
	cfg.Iface, cfg.HTTPPort, cfg.SourceBase, cfg.SourceFrom = l.clientIface, twoHostPort, l.subnet+".", 160
	if len(cfg.MACs) > twoHostClients {
		return nil, fmt.Errorf("%d machines; the client namespace has addresses for %d", len(cfg.MACs), twoHostClients)
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	c := exec.Command("ip", "netns", "exec", l.client, os.Args[0], "-test.run", "^$")
	c.Env = append(os.Environ(), "PN_E2E_STORM="+string(raw))
	r := &stormRun{cmd: c, events: make(chan stormEvent, 1024), stderr: &lockedBuffer{}}
	c.Stderr = r.stderr
	out, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(r.events)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var e stormEvent
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				r.events <- e
			}
		}
		c.Wait()
	}()
	return r, nil
}
