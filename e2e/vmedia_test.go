package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/bmctest"
	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/internal/netnstest"
)

// cdHook is the machine behind the fake BMC of a virtual-media test: on
// a boot from the virtual CD it waits for the BMC's download of the
// medium and lays it out for vm.sh, the ISO as the machine's CD and its
// kernel and initrd, which QEMU boots directly (the test ISO carries no
// El Torito boot loader); the rest goes to vm.sh.
type cdHook struct {
	fakeredfish.CommandHook
	dir  string
	fake func() *fakeredfish.Server
}

func (h cdHook) Set(ctx context.Context, what, value string) error {
	if what == "boot" && value == "cd" {
		file, err := h.fake().WaitMedium(ctx, "CD")
		if err != nil {
			return fmt.Errorf("the virtual CD: %w", err)
		}
		iso := filepath.Join(h.dir, "cd.iso")
		os.Remove(iso)
		if err := os.Link(file, iso); err != nil {
			return err
		}
		os.MkdirAll(filepath.Join(h.dir, "cd"), 0o755)
		out, err := exec.CommandContext(ctx, "xorriso", "-osirrox", "on", "-indev", iso, "-extract", "/boot/linux26", filepath.Join(h.dir, "cd", "linux26"),
			"-extract", "/boot/initrd.img", filepath.Join(h.dir, "cd", "initrd.img")).CombinedOutput()
		if err != nil {
			return fmt.Errorf("the virtual CD's kernel: %v\n%s", err, out)
		}
	}
	return h.CommandHook.Set(ctx, what, value)
}

// httpIn fetches over connections opened in network namespace ns: the
// fake BMC sits on the site's network, where the window is.
func httpIn(ns string) *http.Client {
	return &http.Client{Transport: &http.Transport{Proxy: nil, ResponseHeaderTimeout: 30 * time.Second,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var c net.Conn
			err := netnstest.In(ns, func() error {
				var err error
				c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
				return err
			})
			return c, err
		}}}
}

// TestVirtualMedia is issue 34's install without network boot: a QEMU
// machine behind a Redfish BMC (the fake, which downloads the medium in
// parallel ranges and restarts the machine with it as its CD, booting
// once from it) on a segment where no proxy-DHCP or TFTP runs.
//
//   - ISO: no DHCP at all on the segment; the node's own medium carries
//     its answer (answer.toml, an iso-mode mode file), which the
//     installer reads from the CD, with the static address from its
//     registration. plasma-node drives it from the other host through
//     the daemon's API: a pxe platform whose hardware list machine has
//     boot_method virtual-media and the Redfish BMC, provision --boot
//     (the static address from the platform's ip pool), then refresh
//     and known-hosts: the node file's private_ip and host keys.
//   - HTTP: the site's DHCP server, no PXE; the prepared ISO fetches the
//     answer from the window over HTTP, as a network install does.
//
// Each ends installed with the static address and host keys reported,
// the medium ejected from the BMC, and its URL dead.
func TestVirtualMedia(t *testing.T) {
	media := netbootPrereqs(t)
	bmctest.Need(t)
	for _, tc := range []struct {
		name, answer string
		n            int
		dhcp         bool
	}{{"ISO", "iso", 23, false}, {"HTTP", "http", 24, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newLab(t, tc.n, labOptions{noDHCP: !tc.dhcp, noPXE: true})
			mac := fmt.Sprintf("52:54:00:77:%d:10", tc.n)
			name := "vm" + strings.ToLower(tc.name)
			vm, hook := bmcMachine(t, l, mac)
			var fake *fakeredfish.Server
			fake = fakeredfish.New(fakeredfish.Config{User: "root", Password: bmcPassword, SystemIDs: []string{"1"},
				Hook:  cdHook{CommandHook: fakeredfish.CommandHook{hook, "0x20"}, dir: vm, fake: func() *fakeredfish.Server { return fake }},
				Media: fakeredfish.MediaConfig{Style: fakeredfish.MediaUnderManager, Dir: t.TempDir(), Client: httpIn(l.site), Timeout: 2 * time.Minute}})
			// The BMC listens on the provisioner's network, which both
			// the boot command and the window (ejecting) reach it on.
			srv := httptest.NewUnstartedServer(fake)
			if err := netnstest.In(l.prov, func() error {
				ln, err := net.Listen("tcp", net.JoinHostPort(l.serverIP(), "0"))
				srv.Listener = ln
				return err
			}); err != nil {
				t.Fatal(err)
			}
			srv.StartTLS()
			t.Cleanup(srv.Close)
			sum := sha256.Sum256(srv.Certificate().Raw)
			address := l.subnet + ".60/24"
			var start time.Time
			var pn *projectOf
			winLog := l.serveLog
			if tc.answer == "iso" {
				// plasma-node on the other host: the hardware list's
				// machine boots by virtual media behind its Redfish BMC,
				// its static address from the platform's ip pool.
				name = "metal-control-001"
				dl := startLabDaemon(t, l, media)
				winLog = dl.log
				dl.remote(t, dl.tokens["admin"], "enable", "--ttl", "15m")
				pn = l.project(t)
				pn.dl, pn.env = dl, []string{"E2E_BMC_PW=" + bmcPassword}
				hw := pn.staticPlatform(t, fmt.Sprintf("machines:\n  - macs: [%q]\n    boot_disk: any\n    boot_method: virtual-media\n    bmc:\n      url: %s\n      user: root\n"+
					"      password_env: E2E_BMC_PW\n      fingerprint: %s\n      boot_mode: legacy\n", mac, "redfish://"+strings.TrimPrefix(srv.URL, "https://")+"/1", hex.EncodeToString(sum[:])),
					staticPool{cidr: l.subnet + ".0/24", first: l.subnet + ".60", last: l.subnet + ".70", gateway: l.subnet + ".1", dns: l.subnet + ".1"})
				start = time.Now()
				out := pn.run(t, "provision", "metal", "--hardware", hw, "--auto-approve", "--boot", "--timeout", "150s")
				t.Logf("provision --boot printed:\n%s", out)
				for _, want := range []string{"static address " + address, "next boot the virtual CD once (legacy), power on via redfish", "Refreshed " + name + "@metal: installed address " + l.subnet + ".60, 2 host keys"} {
					if !strings.Contains(out, want) {
						t.Errorf("provision --boot's output lacks %q", want)
					}
				}
			} else {
				pwFile := filepath.Join(t.TempDir(), "bmc-password")
				os.WriteFile(pwFile, []byte(bmcPassword+"\n"), 0o600)
				l.register(t, name, mac, "--bmc", "redfish://"+strings.TrimPrefix(srv.URL, "https://")+"/1", "--bmc-user", "root",
					"--bmc-password-file", pwFile, "--bmc-fingerprint", hex.EncodeToString(sum[:]), "--bmc-boot-mode", "legacy",
					"--boot-method", "virtual-media", "--media-answer", tc.answer, "--address", address, "--gateway", l.subnet+".1", "--dns", l.subnet+".1")
				l.serve(t, media)
				start = time.Now()
				code, out, errs := l.npRunIn(l.prov, "boot", name)
				if code != 0 || out != name+": next boot the virtual CD (legacy, once) and powered on via redfish\n" {
					t.Fatalf("boot: %d %q %s", code, out, errs)
				}
			}
			installed := waitEvent(t, l, "installed", name, 150*time.Second)
			if installed == 0 {
				t.Fatalf("%s did not report installed within 150 s", name)
			}
			took := time.Since(start)
			how := "node-provisioner boot"
			if pn != nil {
				how = "plasma-node provision --boot"
			}
			line := fmt.Sprintf("vmedia %s: %s to installed %s (%s mode, virtual CD by direct kernel boot)", t.Name(), how, took.Round(100*time.Millisecond), tc.answer)
			t.Log(line)
			recordTime(line)
			serial := waitSerial(filepath.Join(vm, "serial.log"), "PLASMA-EMU: OK fqdn="+name+".", 1)
			for _, want := range []string{"PLASMA-EMU: OK fqdn=" + name + ".", "scheme=" + map[string]string{"iso": "iso", "http": "http"}[tc.answer], "network=from-answer address=" + address, "webhook=200"} {
				if !strings.Contains(serial, want) {
					t.Errorf("the serial log lacks %q", want)
				}
			}
			if !strings.Contains(serial, "hostkey=SHA256:") {
				t.Errorf("the installer reported no host key")
			}
			// The window ejects the medium once the node reports installed.
			for end := time.Now().Add(20 * time.Second); fake.Media()[1].Inserted && time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			}
			if m := fake.Media()[1]; m.Inserted || m.Image != "" {
				t.Errorf("the medium is still inserted after the install: %+v", m)
			}
			if st := fake.Media()[1]; st.Ranges < 2 {
				t.Logf("the BMC read the medium in %d ranges", st.Ranges)
			}
			l.wantEvent(t, "bmc", "eject the installer's medium via redfish")
			if strings.Contains(winLog.String(), "proxy-DHCP") || strings.Contains(winLog.String(), "TFTP on") {
				t.Errorf("the window ran proxy-DHCP or TFTP:\n%s", winLog.String())
			}
			if pn != nil { // the node file and known_hosts of plasma-node
				// provision --wait refreshed it already: refresh finds it so.
				if out := pn.run(t, "refresh", "metal"); !strings.Contains(out, name+"@metal is up to date: installed address "+l.subnet+".60, 2 host keys") {
					t.Errorf("refresh: %q", out)
				}
				if nf := readFile(pn.nodeFile(name)); !strings.Contains(nf, "private_ip: "+l.subnet+".60\n") || !strings.Contains(nf, "ssh_host_keys:") {
					t.Errorf("the node file after refresh:\n%s", nf)
				}
				_, marker, _ := strings.Cut(serial, "PLASMA-EMU: OK fqdn=")
				marker, _, _ = strings.Cut(marker, "\n")
				pn.wantKnownHost(t, l.subnet+".60", (&machine{detail: marker}).markerField("hostkey"))
			}
		})
	}
}
