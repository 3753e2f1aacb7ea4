package e2e

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"

	"github.com/plasmactl/plasma-node/internal/netnstest"
	"github.com/plasmactl/plasma-node/pxe/sitepublish"
)

// The site-publish lab: the site's dnsmasq in one namespace, a DHCP and
// DNS client in the other.
const (
	spSite, spClient = "pn-gen-site", "pn-gen-client"
	spVethC, spVethS = "pn-gen-a", "pn-gen-b"
	spServer         = "10.77.60.1"
	spURL            = "https://10.77.60.2:8090/answer"
	spFP             = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89"
)

// TestPublishedLinesWorkInDnsmasq: the lines node-provisioner publish
// prints for dnsmasq pass dnsmasq --test, and a dnsmasq running them
// hands a DHCP client that asks for options 250 and 251 the answer URL
// and the fingerprint as text, byte for byte (a bare AB:CD:… would go out
// as hex bytes); its txt-record lines serve the TXT records a generic ISO
// reads under the search domain, which status's check finds right.
func TestPublishedLinesWorkInDnsmasq(t *testing.T) {
	if _, err := exec.LookPath("dnsmasq"); err != nil {
		netnstest.Missing(t, "needs dnsmasq (Debian package dnsmasq)")
	}
	netnstest.Lab{Client: spClient, Server: spSite, VethA: spVethC, VethB: spVethS, ClientCIDR: "10.77.60.100/24", ServerCIDR: spServer + "/24"}.Create(t)
	dir := t.TempDir()
	np := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(filepath.Join(bin, "node-provisioner"), append([]string{"--state-dir", filepath.Join(dir, "state")}, args...)...).Output()
		if err != nil {
			t.Fatalf("node-provisioner %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	pub := []string{"publish", "--answer-url", spURL, "--cert-fingerprint", spFP, "--search-domain", "e2e.test", "--format"}
	conf := filepath.Join(dir, "dnsmasq.conf")
	site := "interface=" + spVethS + "\nbind-interfaces\ndhcp-range=10.77.60.150,10.77.60.199,255.255.255.0,1h\n" +
		"domain=e2e.test\nlocal=/e2e.test/\nno-resolv\nno-hosts\ndhcp-leasefile=" + filepath.Join(dir, "leases") + "\n"
	os.WriteFile(conf, []byte(site+np(append(pub, "dnsmasq")...)+np(append(pub, "dnsmasq-txt")...)), 0o644)
	if out, err := exec.Command("dnsmasq", "--test", "--conf-file="+conf).CombinedOutput(); err != nil || !strings.Contains(string(out), "syntax check OK") {
		t.Fatalf("dnsmasq --test: %v\n%s", err, out)
	}
	d := exec.Command("ip", "netns", "exec", spSite, "dnsmasq", "--keep-in-foreground", "--conf-file="+conf, "--pid-file=", "--log-dhcp", "--log-queries", "--log-facility=-", "--user=root")
	startDnsmasq(t, d, &lockedBuffer{})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ack *dhcpv4.DHCPv4
	if err := netnstest.In(spClient, func() error {
		c, err := nclient4.New(spVethC, nclient4.WithTimeout(2*time.Second), nclient4.WithRetry(10))
		if err != nil {
			return err
		}
		defer c.Close()
		l, err := c.Request(ctx, dhcpv4.WithRequestedOptions(dhcpv4.GenericOptionCode(sitepublish.OptionAnswerURL), dhcpv4.GenericOptionCode(sitepublish.OptionCertFingerprint)))
		if err == nil {
			ack = l.ACK
		}
		return err
	}); err != nil {
		t.Fatalf("DHCP: %v", err)
	}
	for code, want := range map[uint8]string{sitepublish.OptionAnswerURL: spURL, sitepublish.OptionCertFingerprint: spFP} {
		if got := ack.Options.Get(dhcpv4.GenericOptionCode(code)); string(got) != want {
			t.Errorf("option %d = %q (% x); want the text %q", code, got, got, want)
		}
	}
	if got := ack.DomainName(); got != "e2e.test" {
		t.Errorf("option 15 (the search domain) = %q; want e2e.test", got)
	}

	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var c net.Conn
		err := netnstest.In(spClient, func() (err error) {
			c, err = (&net.Dialer{}).DialContext(ctx, network, net.JoinHostPort(spServer, "53"))
			return err
		})
		return c, err
	}}
	want, err := sitepublish.New(spURL, spFP, "e2e.test")
	if err != nil {
		t.Fatal(err)
	}
	if f := sitepublish.CheckDNS(ctx, res, want, sitepublish.CheckOptions{Required: true}); len(f) != 0 {
		t.Errorf("the published TXT records differ from the window: %v", f)
	}
	moved, _ := sitepublish.New("https://10.77.60.3:8090/answer", spFP, "e2e.test")
	if f := sitepublish.CheckDNS(ctx, res, moved, sitepublish.CheckOptions{}); len(f) != 1 || f[0].Kind != sitepublish.FindingElsewhere {
		t.Errorf("a window elsewhere: findings %v; want one elsewhere", f)
	}
	other, _ := sitepublish.New(spURL, spFP, "other.e2e.test")
	if f := sitepublish.CheckDNS(ctx, res, other, sitepublish.CheckOptions{Required: true}); len(f) != 1 || f[0].Kind != sitepublish.FindingMissing {
		t.Errorf("no records under another domain: findings %v; want one missing", f)
	}
}
