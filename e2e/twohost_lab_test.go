package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/pgtest"
)

// The two-host lab: the netboot lab (a site namespace with its bridge and
// its ordinary DHCP server, dnsmasq) with two provisioner hosts on the
// bridge, A (the netboot lab's prov namespace, .2) and B (a namespace of
// its own, .3), sharing one PostgreSQL store. PostgreSQL runs in the root
// namespace and listens on .4, a veth of the root namespace on the bridge
// (both hosts reach it as a database server on the management segment).
// A client namespace (.159, and one more address per emulated machine
// from .160) plays machines that are not QEMU: proxy-DHCP, TFTP, the boot
// script and the installer's POST. Each host has its own state folder and
// boot assets prepared with its own answer URL; both have the store's key
// file (made by A's first command, copied 0600 into B's state folder).

// twoHostLab is one two-host lab.
type twoHostLab struct {
	*bootLab
	a, b *provHost
	pg   *pgtest.Server
	// client is the client namespace and clientIface its interface.
	client, clientIface string
	// pgIface is the root namespace's interface on the bridge.
	pgIface string
}

// provHost is one provisioner host of the lab.
type provHost struct {
	name, ns, iface, ip string
	state, secrets      string
	env                 []string
	log                 *lockedBuffer
	cmd                 *exec.Cmd
	done                chan struct{}
}

// twoHostPort is the HTTP port of both hosts' windows.
const twoHostPort = 8090

// twoHostClients is how many addresses the client namespace has for
// emulated machines, from .160 (the root namespace's are .200 to .249).
const twoHostClients = 40

// newTwoHostLab builds lab n with its two hosts, the PostgreSQL store and
// the client namespace, and tears them down when the test ends.
func newTwoHostLab(t *testing.T, n int) *twoHostLab {
	t.Helper()
	l := &twoHostLab{bootLab: newLab(t, n, labOptions{}), client: fmt.Sprintf("pn-nb%d-cli", n),
		clientIface: fmt.Sprintf("pnnb%dc", n), pgIface: fmt.Sprintf("pnnb%dg", n)}
	delLinks := func() {
		exec.Command("ip", "netns", "del", l.client).Run()
		exec.Command("ip", "netns", "del", fmt.Sprintf("pn-nb%d-provb", n)).Run()
		exec.Command("ip", "link", "del", l.pgIface).Run()
	}
	delLinks()
	t.Cleanup(delLinks)
	// The root namespace's leg on the bridge, for PostgreSQL and for the
	// test's own HTTP requests (from many addresses).
	l.joinBridge(t, "", l.pgIface, l.subnet+".4/24")
	for i := range 50 {
		run(t, "ip", "addr", "add", fmt.Sprintf("%s.%d/24", l.subnet, 200+i), "dev", l.pgIface)
	}
	run(t, "ip", "netns", "add", l.client)
	run(t, "ip", "-n", l.client, "link", "set", "lo", "up")
	l.joinBridge(t, l.client, l.clientIface, l.subnet+".159/24")
	for i := range twoHostClients {
		run(t, "ip", "-n", l.client, "addr", "add", fmt.Sprintf("%s.%d/24", l.subnet, 160+i), "dev", l.clientIface)
	}
	l.pg = pgtest.StartWith(t, pgtest.Options{Host: l.subnet + ".4"})
	store := l.pg.NewDatabase(t)

	l.a = &provHost{name: "A", ns: l.prov, iface: fmt.Sprintf("pnnb%dp", n), ip: l.serverIP(), state: l.state, secrets: filepath.Join(l.dir, "secrets")}
	bns := fmt.Sprintf("pn-nb%d-provb", n)
	run(t, "ip", "netns", "add", bns)
	run(t, "ip", "-n", bns, "link", "set", "lo", "up")
	l.b = &provHost{name: "B", ns: bns, iface: fmt.Sprintf("pnnb%db", n), ip: l.subnet + ".3", state: filepath.Join(l.dir, "state-b"), secrets: filepath.Join(l.dir, "secrets-b")}
	l.joinBridge(t, bns, l.b.iface, l.b.ip+"/24")
	for _, h := range []*provHost{l.a, l.b} {
		// The URL holds the cluster's password: only in the environment.
		h.env = append(slices0(l.env), "NODE_PROVISIONER_STORE="+store)
		h.log = &lockedBuffer{}
	}
	// A's first command that opens the secrets makes the store's key; B
	// gets a copy.
	l.a.np(t, "register", "keyholder", "--mac", "52:54:00:20:00:01", "--boot-disk", "any")
	l.a.np(t, "unregister", "keyholder")
	key, err := os.ReadFile(filepath.Join(l.a.state, "store.key"))
	if err != nil {
		t.Fatalf("host A made no store key: %v", err)
	}
	if err := os.MkdirAll(l.b.state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.b.state, "store.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	return l
}

// slices0 is a copy of env, so that appending to it never shares an array.
func slices0(env []string) []string { return append([]string(nil), env...) }

// joinBridge puts a new veth on the site's bridge, its other end named
// iface with address cidr in namespace ns ("" for the root namespace).
func (l *twoHostLab) joinBridge(t *testing.T, ns, iface, cidr string) {
	t.Helper()
	peer := iface + "s"
	args := []string{"link", "add", peer, "netns", l.site, "type", "veth", "peer", "name", iface}
	if ns != "" {
		args = append(args, "netns", ns)
	}
	run(t, append([]string{"ip"}, args...)...)
	run(t, "ip", "-n", l.site, "link", "set", peer, "master", "br0", "up")
	in := func(a ...string) []string {
		if ns == "" {
			return append([]string{"ip"}, a...)
		}
		return append([]string{"ip", "-n", ns}, a...)
	}
	run(t, in("addr", "add", cidr, "dev", iface)...)
	run(t, in("link", "set", iface, "up")...)
}

// np runs a local node-provisioner command on the host.
func (h *provHost) np(t *testing.T, args ...string) string {
	t.Helper()
	out, err := h.try(args...)
	if err != nil {
		t.Fatalf("node-provisioner %s on host %s: %v\n%s", strings.Join(args, " "), h.name, err, out)
	}
	return out
}

// try runs a local node-provisioner command on the host, whatever its
// exit status.
func (h *provHost) try(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, filepath.Join(bin, "node-provisioner"), append([]string{"--state-dir", h.state, "--secrets-dir", h.secrets}, args...)...)
	c.Env = h.env
	out, err := c.CombinedOutput()
	return string(out), err
}

// url is the host's window URL of path.
func (h *provHost) url(path string) string {
	return fmt.Sprintf("http://%s:%d%s", h.ip, twoHostPort, path)
}

// prepare stages the media on the host with an answer URL that reaches
// it.
func (h *provHost) prepare(t *testing.T, media netbootMedia) {
	t.Helper()
	h.np(t, "prepare", "--iso", media.iso, "--answer-url", h.url("/answer"))
}

// serve opens the host's window (node-provisioner serve in its
// namespace) and waits for it to serve answers; the test's end stops it.
func (h *provHost) serve(t *testing.T) {
	t.Helper()
	args := []string{"netns", "exec", h.ns, filepath.Join(bin, "node-provisioner"), "--state-dir", h.state, "--secrets-dir", h.secrets,
		"serve", "--http", fmt.Sprintf("%s:%d", h.ip, twoHostPort), "--ttl", "15m", "--dhcp-interface", h.iface, "--domain", "e2e.test",
		"--kernel-arg", "console=ttyS0", "--kernel-arg", "panic=-1"}
	h.start(t, "serve", exec.Command("ip", args...), func(log string) bool { return strings.Contains(log, "Serving answers") })
}

// start starts the host's process c (serve or daemon), logging into the
// host's log, and waits up to 20 s for ready to say it is ready (given
// what it logged so far); the test's end stops it.
func (h *provHost) start(t *testing.T, what string, c *exec.Cmd, ready func(log string) bool) {
	t.Helper()
	c.Env = h.env
	fmt.Fprintf(h.log, "--- %s started %s ---\n", what, time.Now().UTC().Format(time.RFC3339Nano))
	from := len(h.log.String())
	c.Stdout, c.Stderr = h.log, h.log
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	h.cmd, h.done = c, make(chan struct{})
	done := h.done
	go func() { c.Wait(); close(done) }()
	t.Cleanup(func() {
		c.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("host %s log:\n%s", h.name, h.log.String())
		}
	})
	end := time.Now().Add(20 * time.Second)
	for !ready(h.log.String()[from:]) {
		select {
		case <-done:
			t.Fatalf("%s on host %s ended:\n%s", what, h.name, h.log.String())
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("%s on host %s did not start:\n%s", what, h.name, h.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill ends the host's window with SIGKILL (the host dies) and waits for
// it to be gone.
func (h *provHost) kill(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill host %s: %v", h.name, err)
	}
	<-h.done
	fmt.Fprintf(h.log, "--- killed %s ---\n", time.Now().UTC().Format(time.RFC3339Nano))
}

// list is the store's registrations, read on the host.
func (h *provHost) list(t *testing.T) map[string]string {
	t.Helper()
	out := h.np(t, "list", "-o", "json")
	var list []listEntry
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("list -o json on host %s: %v\n%s", h.name, err, out)
	}
	states := map[string]string{}
	for _, e := range list {
		states[e.Name] = e.State
	}
	return states
}

// sysInfo is the installer's system info for a machine with mac.
func sysInfo(t *testing.T, mac string) []byte {
	t.Helper()
	b, err := os.ReadFile("../answer/testdata/sysinfo/pve-9.2-synthetic.json")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(b, []byte("52:54:00:BA:5E:11"), []byte(strings.ToUpper(mac)))
}

// token is the answer token the host's boot assets carry (prepare makes
// one for each release), as its installers send it.
func (h *provHost) token(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.state, "answer-tokens", "9.2-1"))
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		t.Fatalf("host %s keeps no answer token: %q %v", h.name, b, err)
	}
	return string(bytes.TrimSpace(b))
}

// postAnswer posts system info to the host's /answer as its installer
// does (with its answer token), from the root namespace's address src.
func (h *provHost) postAnswer(t *testing.T, src string, body []byte) (int, string, error) {
	t.Helper()
	return postFrom(src, h.url("/answer"), h.token(t), body)
}

// postFrom posts body to url with the answer token from the root
// namespace's address src ("" for any) and returns the status and body.
func postFrom(src, url, token string, body []byte) (int, string, error) {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if src != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), err
}
