package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// TestRemoteProvision is issue 15's whole path across two hosts: the
// site's host (namespace prov) runs node-provisioner daemon; plasma-node
// runs in the other namespace (site, where the machines' bridge and the
// site's dnsmasq are) and provisions a pxe platform of 3 machines
// through the management API with a register-scoped token and the
// pinned fingerprint. One QEMU machine then netboots, gets its answer
// and reports installed, which plasma-node list shows; status --watch,
// following the API's event stream from the site side, printed its boot
// steps as they happened.
func TestRemoteProvision(t *testing.T) {
	t.Parallel()
	media := netbootPrereqs(t)
	l := newLab(t, 9, labOptions{})
	dl := startLabDaemon(t, l, media)
	api, fp, daemonLog := dl.api, dl.fp, dl.log
	regTok, readTok, adminTok := dl.tokens["register"], dl.tokens["read"], dl.tokens["admin"]
	onSite := func(token string, name string, args ...string) (int, string) {
		t.Helper()
		return dl.onSite(t, token, nil, name, args...)
	}
	remote := func(token string, args ...string) string {
		t.Helper()
		return dl.remote(t, token, args...)
	}
	remote(adminTok, "enable", "--ttl", "15m")

	// The project, on the site side: a pxe platform naming the API.
	proj := filepath.Join(l.dir, "project")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	pn := func(token string, args ...string) (int, string) {
		t.Helper()
		return onSite(token, "plasma-node", append([]string{"--dir", proj}, args...)...)
	}
	if code, out := pn("", "add", "metal", "--provider", "pxe", "--domain", "e2e.test"); code != 0 {
		t.Fatalf("add: exit %d\n%s", code, out)
	}
	platFile := filepath.Join(proj, "platforms", "metal", "platform.yaml")
	setAPI := func(fingerprint string) {
		t.Helper()
		raw, err := os.ReadFile(platFile)
		if err != nil {
			t.Fatal(err)
		}
		text := regexp.MustCompile(`(?m)^  provisioner_(url|fingerprint):.*\n`).ReplaceAllString(string(raw), "")
		text = strings.Replace(text, "infrastructure:\n", fmt.Sprintf("infrastructure:\n  provisioner_url: %s\n  provisioner_fingerprint: %q\n", api, fingerprint), 1)
		if err := os.WriteFile(platFile, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	macs := []string{"52:54:00:77:09:11", "52:54:00:77:09:12", "52:54:00:77:09:13"}
	hw := filepath.Join(proj, "hardware.yaml")
	var hwText strings.Builder
	hwText.WriteString("machines:\n")
	for _, m := range macs {
		fmt.Fprintf(&hwText, "  - macs: [%q]\n    boot_disk: any\n", m)
	}
	if err := os.WriteFile(hw, []byte(hwText.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	provision := []string{"provision", "metal", "-z", "foundation.cluster.control:pve:3", "--hardware", hw, "--auto-approve"}

	// Refusals first: a certificate that is not the pinned one is refused
	// before the token is sent; a read token may not register; no token
	// is asked for by name. Nothing is written on the daemon's side.
	setAPI("AA:" + strings.Repeat("00:", 30) + "BB")
	if code, out := pn(regTok, provision...); code != 1 || !strings.Contains(out, "is not the pinned") {
		t.Errorf("provision with a wrong fingerprint: exit %d, want 1 saying the certificate is not the pinned one\n%s", code, out)
	}
	setAPI(fp)
	if code, out := pn(readTok, provision...); code != 1 || !strings.Contains(out, "403") && !strings.Contains(strings.ToLower(out), "scope") {
		t.Errorf("provision with a read token: exit %d, want 1 naming the missing scope\n%s", code, out)
	}
	if code, out := pn("", provision...); code == 0 || !strings.Contains(out, "NODE_PROVISIONER_TOKEN") {
		t.Errorf("provision without a token: exit %d, want a failure naming NODE_PROVISIONER_TOKEN\n%s", code, out)
	}
	if out := remote(readTok, "list"); strings.Contains(out, "metal-control") {
		t.Fatalf("a refused provision registered machines:\n%s", out)
	}

	if code, out := pn(regTok, provision...); code != 0 {
		t.Fatalf("provision through the API: exit %d\n%s", code, out)
	}
	code, out := pn(regTok, "list", "metal")
	if code != 0 || len(regexp.MustCompile(`(?m)\bmetal-control-00[123]\b.*\bpending\b`).FindAllString(out, -1)) != 3 {
		t.Fatalf("list after provision: exit %d, want 3 pending nodes\n%s", code, out)
	}
	if out := remote(readTok, "list"); len(regexp.MustCompile(`metal-control-00[123]\s+pending`).FindAllString(out, -1)) != 3 {
		t.Errorf("node-provisioner does not list the 3 registrations as pending:\n%s", out)
	}

	// Follow the event stream from the site side while a machine boots.
	watchOut := &lockedBuffer{}
	w := exec.Command("ip", "netns", "exec", l.site, filepath.Join(bin, "node-provisioner"), "--server", api, "--fingerprint", fp, "status", "--watch")
	w.Env = append(slices.Clone(l.env), "NODE_PROVISIONER_TOKEN="+readTok)
	w.Stdout, w.Stderr = watchOut, watchOut
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Process.Kill(); w.Wait() })
	end := time.Now().Add(10 * time.Second)
	for !strings.Contains(watchOut.String(), "Events") && time.Now().Before(end) {
		time.Sleep(100 * time.Millisecond)
	}

	m := l.boot(t, vmOptions{name: "metal-control-001", mac: macs[0], rom: true, limit: 90 * time.Second})
	m.wantOK(t, "metal-control-001.")
	end = time.Now().Add(20 * time.Second)
	for {
		_, out = pn(regTok, "list", "metal")
		if regexp.MustCompile(`(?m)\bmetal-control-001\b.*\binstalled\b`).MatchString(out) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("plasma-node list does not show metal-control-001 installed:\n%s", out)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if n := len(regexp.MustCompile(`(?m)\bmetal-control-00[23]\b.*\bpending\b`).FindAllString(out, -1)); n != 2 {
		t.Errorf("the two machines that did not boot are not pending:\n%s", out)
	}
	// The watch saw the steps as they happened, in order.
	end = time.Now().Add(10 * time.Second)
	for !strings.Contains(watchOut.String(), " installed ") && time.Now().Before(end) {
		time.Sleep(100 * time.Millisecond)
	}
	seen := watchOut.String()
	_, printed, _ := strings.Cut(seen, "Events (until interrupted):")
	last := -1
	for _, step := range []events.Kind{events.DHCPOffer, events.Script, events.Kernel, events.Initrd, events.Answer, events.Installed} {
		loc := regexp.MustCompile(`(?m)^\s+\d\d:\d\d:\d\d ` + string(step) + `\s+(metal-control-001|52:54:00:77:09:11)\b`).FindStringIndex(printed)
		if loc == nil || loc[0] < last {
			t.Errorf("status --watch did not print step %q of metal-control-001 after the ones before it:\n%s", step, seen)
			break
		}
		last = loc[0]
	}
	for _, s := range []string{regTok, readTok, adminTok} {
		if strings.Contains(daemonLog.String(), s) || strings.Contains(seen, s) {
			t.Error("a token appears in the daemon's log or the watch output")
		}
	}
}

// daemonLab is a netboot lab whose site host (namespace prov) runs
// node-provisioner daemon; commands of the other host run in the site
// namespace and reach it over the lab's bridge.
type daemonLab struct {
	*bootLab
	api, fp string
	// tokens are one token per scope: read, register, admin.
	tokens map[string]string
	log    *lockedBuffer
	cmd    *exec.Cmd
}

// startLabDaemon prepares the media, makes the tokens and starts the daemon
// (-v, its window's proxy-DHCP on the lab's veth unless the lab's noPXE), returning once its API
// answers from the site side.
func startLabDaemon(t *testing.T, l *bootLab, media netbootMedia) *daemonLab {
	t.Helper()
	dl := &daemonLab{bootLab: l, api: "https://" + l.serverIP() + ":8091", tokens: map[string]string{}, log: &lockedBuffer{}}
	l.np(t, "prepare", "--iso", media.iso, "--answer-url", "http://"+l.serverIP()+":8090/answer")
	for name, scope := range map[string]string{"plasma": "register", "watcher": "read", "ops": "admin"} {
		dl.tokens[scope] = strings.TrimSpace(l.np(t, "token", "create", name, "--scope", scope))
	}
	dl.fp = strings.TrimSpace(l.np(t, "tls", "fingerprint"))
	args := []string{"--kernel-arg", "console=ttyS0", "--kernel-arg", "panic=-1"}
	for _, k := range l.opts.kernelArgs {
		args = append(args, "--kernel-arg", k)
	}
	if !l.opts.noPXE {
		args = append(args, "--dhcp-interface", fmt.Sprintf("pnnb%dp", l.n))
	}
	d := exec.Command("ip", append([]string{"netns", "exec", l.prov, filepath.Join(bin, "node-provisioner"), "--state-dir", l.state, "--secrets-dir", filepath.Join(l.dir, "secrets"),
		"-v", "daemon", "--api", l.serverIP() + ":8091", "--http", l.serverIP() + ":8090", "--domain", "e2e.test"}, args...)...)
	d.Env, d.Stdout, d.Stderr = l.env, dl.log, dl.log
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	dl.cmd = d
	t.Cleanup(func() {
		d.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { d.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			d.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", dl.log.String())
		}
	})
	end := time.Now().Add(15 * time.Second)
	for {
		code, out := dl.onSite(t, dl.tokens["read"], nil, "node-provisioner", "--server", dl.api, "--fingerprint", dl.fp, "list")
		if code == 0 {
			return dl
		}
		if time.Now().After(end) || d.ProcessState != nil {
			t.Fatalf("the daemon's API did not come up: %s\n%s", out, dl.log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// onSite runs a binary in the site namespace (the other host) with the
// token in NODE_PROVISIONER_TOKEN, and returns its exit code and output.
func (dl *daemonLab) onSite(t *testing.T, token string, env []string, name string, args ...string) (int, string) {
	t.Helper()
	c := exec.Command("ip", append([]string{"netns", "exec", dl.site, filepath.Join(bin, name)}, args...)...)
	c.Env = append(slices.Clone(dl.env), "NODE_PROVISIONER_TOKEN="+token, "NODE_PROVISIONER_STATE_DIR=", "PLASMA_NODE_DIR=")
	c.Env = append(c.Env, env...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

// remote runs node-provisioner --server on the site side; it must exit 0.
func (dl *daemonLab) remote(t *testing.T, token string, args ...string) string {
	t.Helper()
	code, out := dl.onSite(t, token, nil, "node-provisioner", append([]string{"--server", dl.api, "--fingerprint", dl.fp}, args...)...)
	if code != 0 {
		t.Fatalf("node-provisioner --server %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}
