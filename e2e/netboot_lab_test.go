package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/netnstest"
)

// labOptions configure a lab's server.
type labOptions struct {
	tls      bool
	token    bool   // prepare --answer-auth-token auto
	bootFile string // --bootfile; empty: serve's default
	// kernelArgs are more --kernel-arg values for the installer.
	kernelArgs []string
	// serveArgs are more arguments of node-provisioner serve.
	serveArgs []string
	// prepareArgs are more arguments of node-provisioner prepare.
	prepareArgs []string
	// siteNextServer makes the site's DHCP server name the window as
	// next-server (siaddr) in its leases, with no boot file, as a site
	// does for a boot loader that reads only the lease (Debian's grub).
	siteNextServer bool
	// generic prepares a generic ISO (prepare --generic) instead of
	// baking the answer URL in.
	generic bool
	// siteConf, when set, returns more configuration for the site's
	// dnsmasq; it is called once the lab's state folder exists.
	siteConf func(t *testing.T, l *bootLab) string
	// siteDNS makes the site's dnsmasq the segment's resolver as well,
	// for the search domain e2e.test, which its DHCP hands out.
	siteDNS bool
	// ipv6Only builds a segment with no IPv4 at all: the bridge and the
	// window have fd77:N::1 and ::2, and the site's dnsmasq leases
	// fd77:N::100-1ff by DHCPv6 and advertises the prefix for SLAAC too.
	ipv6Only bool
	// noDHCP runs no DHCP server on the segment at all (the site's
	// dnsmasq is not started): a network where only static addresses
	// work.
	noDHCP bool
	// noPXE serves the window without --dhcp-interface: no proxy-DHCP
	// and no TFTP, only HTTP (a virtual-media install).
	noPXE bool
}

// bootLab is one run's network, site DHCP server and node-provisioner.
type bootLab struct {
	n          int
	opts       labOptions
	site, prov string // namespaces
	subnet     string // "10.77.1N"
	state, dir string
	env        []string
	serveLog   *lockedBuffer
	dnsmasqLog *lockedBuffer
	taps       int
}

// newLab builds run n's namespaces, bridge, veth and site DHCP server, and
// tears them down when the test ends, also when it fails.
func newLab(t *testing.T, n int, opts labOptions) *bootLab {
	t.Helper()
	l := &bootLab{n: n, opts: opts, site: fmt.Sprintf("pn-nb%d-site", n), prov: fmt.Sprintf("pn-nb%d-prov", n), subnet: fmt.Sprintf("10.77.%d", 10+n),
		dir: t.TempDir(), serveLog: &lockedBuffer{}, dnsmasqLog: &lockedBuffer{}}
	l.state = filepath.Join(l.dir, "state")
	home := filepath.Join(l.dir, "home")
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGzx6HqSm1mQ3VcLaZ3r0ZKtgtF5wVbUEjS0Xv5R5N5g op@e2e\n"), 0o644)
	l.env = append(os.Environ(), "HOME="+home)
	del := func() {
		exec.Command("ip", "netns", "del", l.site).Run()
		exec.Command("ip", "netns", "del", l.prov).Run()
	}
	del()
	t.Cleanup(del)
	veth := fmt.Sprintf("pnnb%d", n)
	run(t, "ip", "netns", "add", l.site)
	run(t, "ip", "netns", "add", l.prov)
	run(t, "ip", "-n", l.site, "link", "set", "lo", "up")
	run(t, "ip", "-n", l.prov, "link", "set", "lo", "up")
	run(t, "ip", "-n", l.site, "link", "add", "br0", "type", "bridge")
	if !opts.ipv6Only {
		run(t, "ip", "-n", l.site, "addr", "add", l.subnet+".1/24", "dev", "br0")
	}
	run(t, "ip", "-n", l.site, "addr", "add", fmt.Sprintf("fd77:%d::1/64", n), "dev", "br0", "nodad")
	run(t, "ip", "-n", l.site, "link", "set", "br0", "up")
	run(t, "ip", "link", "add", veth+"s", "netns", l.site, "type", "veth", "peer", "name", veth+"p", "netns", l.prov)
	run(t, "ip", "-n", l.site, "link", "set", veth+"s", "master", "br0", "up")
	if opts.ipv6Only {
		// The window keeps its one address (no SLAAC address beside it).
		run(t, "ip", "netns", "exec", l.prov, "sysctl", "-qw", "net.ipv6.conf."+veth+"p.accept_ra=0")
		run(t, "ip", "-n", l.prov, "addr", "add", l.serverIP()+"/64", "dev", veth+"p", "nodad")
	} else {
		run(t, "ip", "-n", l.prov, "addr", "add", l.serverIP()+"/24", "dev", veth+"p")
	}
	run(t, "ip", "-n", l.prov, "link", "set", veth+"p", "up")

	// The site's ordinary DHCP server: addresses only. --no-ping, or a
	// new client's first DISCOVER misses its window while dnsmasq pings;
	// router advertisements stop iPXE waiting for IPv6.
	d := exec.Command("ip", "netns", "exec", l.site, "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--port=0", "--no-ping",
		"--bind-interfaces", "--interface=br0", "--dhcp-range="+l.subnet+".100,"+l.subnet+".150,255.255.255.0,1h",
		"--enable-ra", fmt.Sprintf("--dhcp-range=fd77:%d::,ra-only,64", n), "--dhcp-leasefile="+filepath.Join(l.dir, "leases"),
		"--pid-file=", "--log-dhcp", "--log-facility=-", "--user=root")
	if opts.siteNextServer {
		d.Args = append(d.Args, "--dhcp-boot=,,"+l.serverIP())
	}
	if opts.ipv6Only {
		d.Args = slices.DeleteFunc(d.Args, func(a string) bool { return strings.HasPrefix(a, "--dhcp-range=") })
		d.Args = append(d.Args, fmt.Sprintf("--dhcp-range=fd77:%d::100,fd77:%d::1ff,slaac,64,1h", n, n))
	}
	l.siteOptions(t, d)
	if !opts.noDHCP {
		startDnsmasq(t, d, l.dnsmasqLog)
	}
	return l
}

func (l *bootLab) serverIP() string {
	if l.opts.ipv6Only {
		return fmt.Sprintf("fd77:%d::2", l.n)
	}
	return l.subnet + ".2"
}

// window is the window's host and port, bracketed for IPv6.
func (l *bootLab) window() string { return net.JoinHostPort(l.serverIP(), "8090") }

func (l *bootLab) np(t *testing.T, args ...string) string {
	t.Helper()
	c := exec.Command(filepath.Join(bin, "node-provisioner"), append([]string{"--state-dir", l.state, "--secrets-dir", filepath.Join(l.dir, "secrets")}, args...)...)
	c.Env = l.env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("node-provisioner %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// register registers a node pinned to mac.
func (l *bootLab) register(t *testing.T, name, mac string, extra ...string) {
	t.Helper()
	args := []string{"register", name, "--boot-disk", "any"}
	if mac != "" {
		args = append(args, "--mac", mac)
	}
	l.np(t, append(args, extra...)...)
}

// serve prepares the media with the lab's answer URL baked in and starts
// node-provisioner serve in the prov namespace until the test ends.
func (l *bootLab) serve(t *testing.T, media netbootMedia) {
	t.Helper()
	scheme := "http"
	prep := []string{"prepare", "--iso", media.iso}
	if l.opts.tls {
		scheme = "https"
		prep = append(prep, "--cert-fingerprint", "auto")
	}
	if l.opts.generic {
		prep = []string{"prepare", "--iso", media.iso, "--generic"}
	} else {
		prep = append(prep, "--answer-url", scheme+"://"+l.window()+"/answer")
	}
	if l.opts.token {
		prep = append(prep, "--answer-auth-token", "auto")
	}
	l.np(t, append(prep, l.opts.prepareArgs...)...)
	args := []string{"--state-dir", l.state, "--secrets-dir", filepath.Join(l.dir, "secrets"), "serve", "--http", l.window(), "--ttl", "15m",
		"--domain", "e2e.test", "--kernel-arg", "console=ttyS0", "--kernel-arg", "panic=-1"}
	if !l.opts.noPXE {
		args = append(args, "--dhcp-interface", fmt.Sprintf("pnnb%dp", l.n))
	}
	if l.opts.tls {
		args = append(args, "--tls")
	}
	if l.opts.bootFile != "" {
		args = append(args, "--bootfile", l.opts.bootFile)
	}
	for _, k := range l.opts.kernelArgs {
		args = append(args, "--kernel-arg", k)
	}
	args = append(args, l.opts.serveArgs...)
	s := exec.Command("ip", append([]string{"netns", "exec", l.prov, filepath.Join(bin, "node-provisioner")}, args...)...)
	s.Env = l.env
	s.Stdout, s.Stderr = l.serveLog, l.serveLog
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { s.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			s.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("node-provisioner serve log:\n%s", l.serveLog.String())
			ev, _ := os.ReadFile(filepath.Join(l.state, "events.jsonl"))
			t.Logf("server event log (events.jsonl):\n%s", ev)
		}
	})
	end := time.Now().Add(15 * time.Second)
	for !strings.Contains(l.serveLog.String(), "Serving answers") {
		if time.Now().After(end) || s.ProcessState != nil {
			t.Fatalf("serve did not start:\n%s", l.serveLog.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (l *bootLab) wantLog(t *testing.T, s string) {
	t.Helper()
	if !strings.Contains(l.serveLog.String(), s) {
		t.Errorf("the server log does not mention %q", s)
	}
}

func (l *bootLab) wantNoLog(t *testing.T, s string) {
	t.Helper()
	if strings.Contains(l.serveLog.String(), s) {
		t.Errorf("the server log mentions %q", s)
	}
}

// events reads the answer server's event log.
func (l *bootLab) events(t *testing.T) []map[string]any {
	t.Helper()
	raw, _ := os.ReadFile(filepath.Join(l.state, "events.jsonl"))
	var out []map[string]any
	for _, line := range bytes.Split(raw, []byte("\n")) {
		var e map[string]any
		if json.Unmarshal(line, &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// wantEvent wants an event of kind whose JSON mentions s.
func (l *bootLab) wantEvent(t *testing.T, kind, s string) {
	t.Helper()
	for _, e := range l.events(t) {
		b, _ := json.Marshal(e)
		if e["kind"] == kind && strings.Contains(string(b), s) {
			return
		}
	}
	t.Errorf("no %s event mentioning %q in the event log", kind, s)
}

// tftpRead is the first TFTP read request a lab's site DHCP server was
// sent; asked is closed once it came.
type tftpRead struct {
	asked      chan struct{}
	file, from string
}

// listenSiteTFTP listens on TFTP's port at the site DHCP server's address
// (which serves no TFTP) for a boot loader that takes its server from the
// lease, and records the first read request it sends there.
func (l *bootLab) listenSiteTFTP(t *testing.T) *tftpRead {
	t.Helper()
	var c net.PacketConn
	if err := netnstest.In(l.site, func() (err error) {
		c, err = net.ListenPacket("udp4", l.subnet+".1:69")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := &tftpRead{asked: make(chan struct{})}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			// RRQ: opcode 1, then the file name, NUL-terminated.
			if n > 2 && buf[0] == 0 && buf[1] == 1 {
				file, _, _ := bytes.Cut(buf[2:n], []byte{0})
				r.file, r.from = string(file), from.String()
				close(r.asked)
				return
			}
		}
	}()
	return r
}
