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
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/bmctest"
	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/internal/netnstest"
)

// cdHook is the machine behind the fake BMC of a virtual-media test: on
// a boot from the virtual CD it waits for the BMC's download of the
// medium and lays it out for vm.sh, which puts it in the machine's CD
// drive and boots once from it (the firmware boots ISOLINUX from the
// ISO's El Torito record); the rest goes to vm.sh.
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
// once from it) on a segment where no proxy-DHCP or TFTP runs, driven by
// plasma-node from the other host through the daemon's API: a pxe
// platform whose hardware list machine has boot_method virtual-media, its
// media_answer and the Redfish BMC; provision --boot (the static address
// from the platform's ip pool), then refresh and known-hosts: the node
// file's private_ip and host keys.
//
//   - ISO: no DHCP at all on the segment; the node's own medium carries
//     its answer (answer.toml, an iso-mode mode file), which the
//     installer reads from the CD. Then reinstall --wait: re-armed, the
//     BMC boots a new medium, the machine installs again and the node
//     file's host keys are the new install's.
//   - HTTP: the site's DHCP server, no PXE; the prepared ISO fetches the
//     answer from the window over HTTP, as a network install does.
//
// Each install ends installed with the static address and host keys
// reported, the medium ejected from the BMC, and its URL dead.
func TestVirtualMedia(t *testing.T) {
	media := netbootPrereqs(t)
	bmctest.Need(t)
	for _, tc := range []struct {
		name, answer string
		n            int
		dhcp         bool
		reinstall    bool
	}{{"ISO", "iso", 23, false, true}, {"HTTP", "http", 24, true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newLab(t, tc.n, labOptions{noDHCP: !tc.dhcp, noPXE: true})
			mac := fmt.Sprintf("52:54:00:77:%d:10", tc.n)
			const name = "metal-control-001"
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
			// plasma-node on the other host: the hardware list's machine
			// boots by virtual media behind its Redfish BMC, its static
			// address from the platform's ip pool.
			dl := startLabDaemon(t, l, media)
			dl.remote(t, dl.tokens["admin"], "enable", "--ttl", "15m")
			pn := l.project(t)
			pn.dl, pn.env = dl, []string{"E2E_BMC_PW=" + bmcPassword}
			hw := pn.staticPlatform(t, fmt.Sprintf("machines:\n  - macs: [%q]\n    boot_disk: any\n    boot_method: virtual-media\n    media_answer: %s\n    bmc:\n      url: %s\n      user: root\n"+
				"      password_env: E2E_BMC_PW\n      fingerprint: %s\n      boot_mode: legacy\n", mac, tc.answer, "redfish://"+strings.TrimPrefix(srv.URL, "https://")+"/1", hex.EncodeToString(sum[:])),
				staticPool{cidr: l.subnet + ".0/24", first: l.subnet + ".60", last: l.subnet + ".70", gateway: l.subnet + ".1", dns: l.subnet + ".1"})
			v := vmediaRun{l: l, dl: dl, pn: pn, fake: fake, name: name, address: address, answer: tc.answer, serial: filepath.Join(vm, "serial.log")}
			start := time.Now()
			out := pn.run(t, "provision", "metal", "--hardware", hw, "--auto-approve", "--boot", "--timeout", "150s")
			t.Logf("provision --boot printed:\n%s", out)
			for _, want := range []string{"static address " + address, "next boot the virtual CD once (legacy), power on via redfish"} {
				if !strings.Contains(out, want) {
					t.Errorf("provision --boot's output lacks %q", want)
				}
			}
			keys := v.installed(t, 1, "plasma-node provision --boot", start, out)
			if !tc.reinstall {
				return
			}
			// reinstall --wait: re-armed with a new medium URL, the BMC
			// boots it, the machine installs again with new host keys.
			start = time.Now()
			out = pn.run(t, "reinstall", name, "--force", "--wait", "--timeout", "150s")
			t.Logf("reinstall --wait printed:\n%s", out)
			for _, want := range []string{"re-armed for one install with a new root password; next boot the virtual CD once (legacy), power on via redfish"} {
				if !strings.Contains(out, want) {
					t.Errorf("reinstall --wait's output lacks %q", want)
				}
			}
			if again := v.installed(t, 2, "plasma-node reinstall --wait", start, out); again == keys {
				t.Errorf("the node file's host keys did not change with the reinstall:\n%s", again)
			}
		})
	}
}

// consoleMoves matches the terminal sequences SeaBIOS's serial console
// writes between the characters of a boot loader's text (cursor moves,
// resets), which can split a line it prints.
var consoleMoves = regexp.MustCompile(`\x1b(\[[0-9;?]*[A-Za-z]|c)`)

// vmediaRun is one virtual-media machine of TestVirtualMedia, driven by
// plasma-node through the lab's daemon.
type vmediaRun struct {
	l                             *bootLab
	dl                            *daemonLab
	pn                            *projectOf
	fake                          *fakeredfish.Server
	name, address, answer, serial string
}

// installed checks the machine's nth install, which plasma-node's
// command (how, begun at start, printing out) waited for: the serial
// log's marker, the medium ejected, no proxy-DHCP or TFTP, refresh
// finding the node file up to date with the static address and host
// keys, known_hosts naming the reported key. It records the boot's time
// and returns the node file's ssh_host_keys.
func (v vmediaRun) installed(t *testing.T, nth int, how string, start time.Time, out string) string {
	t.Helper()
	ip := strings.TrimSuffix(v.address, "/24")
	if want := "Refreshed " + v.name + "@metal: installed address " + ip + ", 2 host keys"; !strings.Contains(out, want) {
		t.Errorf("%s's output lacks %q", how, want)
	}
	took := time.Since(start)
	line := fmt.Sprintf("vmedia %s: %s to installed %s (%s mode, virtual CD booted by the firmware: ISOLINUX)", t.Name(), how, took.Round(100*time.Millisecond), v.answer)
	t.Log(line)
	recordTime(line)
	serial := waitSerial(v.serial, "PLASMA-EMU: OK fqdn="+v.name+".", nth)
	all := strings.Split(serial, "PLASMA-EMU: OK fqdn=")
	if len(all) != nth+1 {
		t.Fatalf("the serial log has %d installs, want %d", len(all)-1, nth)
	}
	marker, _, _ := strings.Cut(all[nth], "\n")
	// The firmware booted the virtual CD: SeaBIOS says so, ISOLINUX's
	// configuration prints its marker, and the kernel's command line has
	// the BOOT_IMAGE a boot loader gives (a direct kernel boot has none).
	cd := strings.Split(consoleMoves.ReplaceAllString(serial, ""), "bootdev=cd")
	if len(cd) != nth+1 {
		t.Fatalf("the serial log has %d power-ons from the virtual CD, want %d", len(cd)-1, nth)
	}
	boot, _, _ := strings.Cut(cd[nth], "=== power-on")
	for _, want := range []string{"Booting from DVD/CD", isolinuxMarker, "Command line: BOOT_IMAGE=/boot/linux26 console=ttyS0 panic=-1"} {
		if !strings.Contains(boot, want) {
			t.Errorf("boot %d from the virtual CD lacks %q on the serial console", nth, want)
		}
	}
	for _, want := range []string{v.name + ".", "scheme=" + v.answer, "network=from-answer address=" + v.address, "webhook=200", "hostkey=SHA256:"} {
		if !strings.Contains(marker, want) {
			t.Errorf("install %d's serial marker lacks %q: %s", nth, want, marker)
		}
	}
	// The window ejects the medium once the node reports installed.
	for end := time.Now().Add(20 * time.Second); v.fake.Media()[1].Inserted && time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
	}
	if m := v.fake.Media()[1]; m.Inserted || m.Image != "" {
		t.Errorf("the medium is still inserted after the install: %+v", m)
	}
	v.l.wantEvent(t, "bmc", "eject the installer's medium via redfish")
	if log := v.dl.log.String(); strings.Contains(log, "proxy-DHCP") || strings.Contains(log, "TFTP on") {
		t.Errorf("the window ran proxy-DHCP or TFTP:\n%s", log)
	}
	// provision --wait refreshed the node file already: refresh finds it so.
	if out := v.pn.run(t, "refresh", "metal"); !strings.Contains(out, v.name+"@metal is up to date: installed address "+ip+", 2 host keys") {
		t.Errorf("refresh: %q", out)
	}
	nf := readFile(v.pn.nodeFile(v.name))
	var keys []string
	for _, l := range strings.Split(nf, "\n") {
		if strings.Contains(l, "ssh-ed25519 ") || strings.Contains(l, "ecdsa-sha2-") {
			keys = append(keys, strings.TrimSpace(l))
		}
	}
	if !strings.Contains(nf, "private_ip: "+ip+"\n") || !strings.Contains(nf, "ssh_host_keys:") || len(keys) != 2 {
		t.Errorf("the node file after refresh:\n%s", nf)
	}
	v.pn.wantKnownHost(t, ip, (&machine{detail: marker}).markerField("hostkey"))
	return strings.Join(keys, "\n")
}
