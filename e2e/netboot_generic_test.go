package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// siteOptions adds the lab's site configuration to the site's dnsmasq d:
// labOptions.siteConf as a configuration file, and with siteDNS the
// resolver for e2e.test (DNS on port 53 of br0, the domain handed out).
func (l *bootLab) siteOptions(t *testing.T, d *exec.Cmd) {
	t.Helper()
	if l.opts.siteConf != nil {
		conf := filepath.Join(l.dir, "site-dnsmasq.conf")
		if err := os.WriteFile(conf, []byte(l.opts.siteConf(t, l)), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("dnsmasq", "--test", "--conf-file="+conf).CombinedOutput(); err != nil {
			t.Fatalf("dnsmasq --test of the site's lines: %v\n%s", err, out)
		}
		d.Args = append(d.Args, "--conf-file="+conf)
	}
	if l.opts.siteDNS {
		d.Args = slices.DeleteFunc(d.Args, func(a string) bool { return a == "--port=0" })
		d.Args = append(d.Args, "--domain=e2e.test", "--local=/e2e.test/", "--no-resolv", "--no-hosts", "--log-queries")
	}
}

// startDnsmasq starts d, a dnsmasq kept in the foreground, logging to
// log, and stops it when the test ends, showing the log if it failed.
func startDnsmasq(t *testing.T, d *exec.Cmd, log *lockedBuffer) {
	t.Helper()
	d.Stdout, d.Stderr = log, log
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Process.Kill()
		d.Wait()
		if t.Failed() {
			t.Logf("dnsmasq log:\n%s", log.String())
		}
	})
}

// statusVia runs status --search-domain domain in the window's namespace,
// with the site's dnsmasq as its resolver (ip netns exec mounts
// /etc/netns/<ns>/resolv.conf over /etc/resolv.conf), and returns its
// output.
func (l *bootLab) statusVia(t *testing.T, domain string) string {
	t.Helper()
	etc := filepath.Join("/etc/netns", l.prov)
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(etc)
		os.Remove("/etc/netns") // only when no other namespace has files there
	})
	if err := os.WriteFile(filepath.Join(etc, "resolv.conf"), []byte("nameserver "+l.subnet+".1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := exec.Command("ip", "netns", "exec", l.prov, filepath.Join(bin, "node-provisioner"), "--state-dir", l.state, "--secrets-dir", filepath.Join(l.dir, "secrets"), "status", "--search-domain", domain)
	c.Env = l.env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Errorf("status --search-domain %s: %v\n%s", domain, err, out)
	}
	return string(out)
}

// genericSite returns the site's dnsmasq lines node-provisioner publish
// prints for the lab's window (https, the state folder's certificate), in
// format.
func genericSite(format string) func(t *testing.T, l *bootLab) string {
	return func(t *testing.T, l *bootLab) string {
		l.np(t, "tls", "fingerprint")
		return l.np(t, "publish", "--answer-url", "https://"+l.serverIP()+":8090/answer", "--search-domain", "e2e.test", "--format", format)
	}
}

// TestNetbootGenericISO: a generic ISO (prepare --generic: mode http, no
// URL) finds the window as proxmox-fetch-answer does. The site's dnsmasq
// runs the lines node-provisioner publish prints: first options 250 and
// 251 in the installer's own DHCP lease, then, with no option 250, the
// TXT records dnsmasq serves as the segment's resolver under the search
// domain its DHCP hands out. Both fetch the answer over https pinned to
// the published fingerprint and post the webhook.
func TestNetbootGenericISO(t *testing.T) {
	t.Parallel() // its labs (34, 35) are its own; qemuSlots bounds the machines
	media := netbootPrereqs(t)
	t.Run("DHCPOption250", func(t *testing.T) {
		t.Parallel()
		l := newLab(t, 34, labOptions{tls: true, generic: true, siteConf: genericSite("dnsmasq")})
		l.register(t, "gen1", "52:54:00:77:34:10")
		l.serve(t, media)
		m := l.boot(t, vmOptions{name: "gen1", mac: "52:54:00:77:34:10", rom: true, limit: 90 * time.Second})
		m.wantOK(t, "gen1.")
		m.wantDetail(t, "scheme=https", "webhook=200", "token=sent")
		m.wantSerial(t, "answer URL https://"+l.serverIP()+":8090/answer from DHCP option 250")
		l.wantEvent(t, "installed", "gen1")
		if !strings.Contains(l.dnsmasqLog.String(), "250 ") {
			t.Errorf("the site's dnsmasq did not log sending option 250")
		}
	})
	t.Run("DNSTXT", func(t *testing.T) {
		t.Parallel()
		// --release 9.2-1: the name a direct boot takes the kernel from.
		l := newLab(t, 35, labOptions{tls: true, generic: true, siteDNS: true, siteConf: genericSite("dnsmasq-txt"), prepareArgs: []string{"--release", "9.2-1"}})
		l.register(t, "gen2", "52:54:00:77:35:10")
		l.serve(t, media)
		// As from a USB stick: the generic ISO's kernel and initrd booted
		// directly, no netboot.
		m := l.boot(t, vmOptions{name: "gen2", mac: "52:54:00:77:35:10", direct: true, limit: 90 * time.Second})
		m.wantOK(t, "gen2.")
		m.wantDetail(t, "scheme=https", "webhook=200")
		m.wantSerial(t, "no DHCP option found for the answer URL")
		m.wantSerial(t, "answer URL https://"+l.serverIP()+":8090/answer from DNS TXT")
		l.wantEvent(t, "installed", "gen2")
		if !strings.Contains(l.dnsmasqLog.String(), "proxmox-auto-installer.e2e.test") {
			t.Errorf("the site's dnsmasq logged no query for proxmox-auto-installer.e2e.test")
		}
		// status on the window's host, dnsmasq its resolver: the records
		// match under e2e.test, and are missing under another domain.
		if out := l.statusVia(t, "e2e.test"); strings.Contains(out, "DNS TXT") {
			t.Errorf("status warns of records that match the window:\n%s", out)
		}
		if out := l.statusVia(t, "other.e2e.test"); !strings.Contains(out, "warning: DNS TXT proxmox-auto-installer.other.e2e.test: no record") {
			t.Errorf("status does not warn of the missing record under other.e2e.test:\n%s", out)
		}
	})
}
