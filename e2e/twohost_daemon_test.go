package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/client"
)

// twoHostAPIPort is the management API's port of both hosts' daemons.
const twoHostAPIPort = 8091

// hostName is the host's name to the site: each host's daemon runs in a
// UTS namespace of its own, as on a machine of its own.
func (h *provHost) hostName() string { return "prov-" + strings.ToLower(h.name) }

// daemon starts node-provisioner daemon on the host (its own host name,
// its API and window on its address, proxy-DHCP on its interface) and
// returns a client of its API (token: admin, its certificate pinned);
// the test's end stops it.
func (h *provHost) daemon(t *testing.T, admin string) *client.Client {
	t.Helper()
	fp := strings.TrimSpace(h.np(t, "tls", "fingerprint"))
	np := filepath.Join(bin, "node-provisioner")
	// unshare execs sh, which execs the daemon: one process, the one a
	// SIGKILL ends.
	script := fmt.Sprintf(`hostname %s && exec "$@"`, h.hostName())
	args := []string{"netns", "exec", h.ns, "unshare", "--uts", "sh", "-c", script, "sh", np, "--state-dir", h.state, "--secrets-dir", h.secrets,
		"daemon", "--api", fmt.Sprintf("%s:%d", h.ip, twoHostAPIPort), "--http", fmt.Sprintf("%s:%d", h.ip, twoHostPort),
		"--dhcp-interface", h.iface, "--domain", "e2e.test", "--kernel-arg", "console=ttyS0", "--kernel-arg", "panic=-1"}
	c, err := client.New(client.Options{URL: fmt.Sprintf("https://%s:%d", h.ip, twoHostAPIPort), Token: admin, Fingerprint: fp})
	if err != nil {
		t.Fatal(err)
	}
	h.start(t, "daemon", exec.Command("ip", args...), func(string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return c.Health(ctx) == nil
	})
	return c
}

// stop ends the host's window or daemon as an operator does (SIGINT)
// and waits for it.
func (h *provHost) stop(t *testing.T) {
	t.Helper()
	if h.cmd == nil {
		return
	}
	select {
	case <-h.done:
		return
	default:
	}
	h.cmd.Process.Signal(os.Interrupt)
	select {
	case <-h.done:
	case <-time.After(15 * time.Second):
		h.cmd.Process.Signal(syscall.SIGKILL)
		<-h.done
		t.Errorf("host %s did not stop within 15 s of SIGINT", h.name)
	}
}

// failoverQEMU: each host runs a daemon on the shared store; the site's
// window is opened through host A's API and host B follows it (serving
// within seconds, naming A as its opener). Two machines are registered;
// A's daemon is killed (SIGKILL) before they power on. Both install
// through B: real firmware (SeaBIOS, iPXE) takes B's proxy offer, B's
// boot assets, whose answer URL names B, and B's answer.
func (l *twoHostLab) failoverQEMU(t *testing.T) {
	vms := []vmOptions{
		{name: "fo1", mac: "52:54:00:20:0a:11", rom: true, limit: 150 * time.Second},
		{name: "fo2", mac: "52:54:00:20:0a:12", rom: true, limit: 150 * time.Second},
	}
	// The hosts' own windows (serve) make way for their daemons.
	l.a.stop(t)
	l.b.stop(t)
	for _, v := range vms {
		l.a.np(t, "register", v.name, "--mac", v.mac, "--boot-disk", "any")
	}
	admin := strings.TrimSpace(l.a.np(t, "token", "create", "failover", "--scope", "admin"))
	ca := l.a.daemon(t, admin)
	cb := l.b.daemon(t, admin)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if w, err := ca.OpenWindow(ctx, 15*time.Minute); err != nil || !w.Open || !w.Daemon {
		t.Fatalf("open the site's window through host A: %+v %v", w, err)
	}
	var wb client.WindowStatus
	waitFor(t, 15*time.Second, func() bool {
		w, err := cb.Window(ctx)
		wb = w
		return err == nil && w.Open && w.Daemon && w.URL != ""
	})
	if wb.OpenedBy != l.a.hostName() {
		t.Errorf("host B's window: opened by %q; want %q", wb.OpenedBy, l.a.hostName())
	}
	serving := map[string]bool{}
	for _, h := range wb.Hosts {
		serving[h.Name] = h.Serving
	}
	if !serving[l.a.hostName()] || !serving[l.b.hostName()] {
		t.Errorf("host B's window lists hosts %+v; want both serving", wb.Hosts)
	}
	l.a.kill(t)
	ms := l.bootAll(t, vms...)
	states := l.b.list(t)
	for i, m := range ms {
		m.wantOK(t, vms[i].name+".")
		m.wantDetail(t, "mac="+strings.ToUpper(vms[i].mac))
		m.wantSerial(t, l.b.ip+":8090")
		if strings.Contains(m.serial, l.a.ip+":8090") {
			t.Errorf("%s: the serial log names host A's window", vms[i].name)
		}
		// Installed once its installer's webhook reached B.
		if got := states[vms[i].name]; got != "installed" {
			t.Errorf("%s: %q; want installed", vms[i].name, got)
		}
	}
	// The boots took most of ctx's 30 s on a loaded machine: B's
	// answers after them get their own.
	after, cancelAfter := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelAfter()
	if w, err := cb.Window(after); err != nil || !w.Open || !w.Daemon {
		t.Errorf("host B's window after A's death: %+v %v", w, err)
	}
	if err := cb.CloseWindow(after); err != nil {
		t.Errorf("close the site's window through host B: %v", err)
	}
}
