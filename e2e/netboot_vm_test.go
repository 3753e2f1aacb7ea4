package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// vmOptions describe one QEMU machine.
type vmOptions struct {
	name, mac string
	// uefi boots q35 with OVMF; else pc with SeaBIOS.
	uefi bool
	// secureBoot (with uefi) boots OVMF with Secure Boot enforcing and
	// Microsoft's keys enrolled (OVMF_CODE_4M.ms.fd, a fresh copy of
	// OVMF_VARS_4M.ms.fd), on q35 with SMM.
	secureBoot bool
	// httpBoot (with uefi) turns OVMF's PXE off (fw_cfg
	// opt/org.tianocore/IPv4PXESupport and IPv6Support), so that the
	// NIC's first boot option is UEFI HTTP boot over IPv4.
	httpBoot bool
	// ipv6PXE (with uefi) turns OVMF's PXE over IPv4 off (fw_cfg
	// opt/org.tianocore/IPv4PXESupport), as a machine set to boot over
	// IPv6 only: its first boot option is then PXE over IPv6.
	ipv6PXE bool
	// httpBoot6 (with uefi) turns OVMF's PXE off over both families and
	// its IPv4 stack too (fw_cfg opt/org.tianocore/IPv4PXESupport,
	// IPv6PXESupport, IPv4Support): the NIC's one boot option is then
	// HTTP boot over IPv6, with no wait for a DHCPv4 server the segment
	// lacks. OVMF 2022.11's HTTP boot over IPv6 sends its first Solicit
	// without waiting for the link-local address's duplicate address
	// detection (EFI_NO_MAPPING: "Unexpected network error"; edk2 waits
	// since 11f1d28, 2025), which the IPv4 boot used to cover: a boot
	// menu wait (bootMenuWait) lets it end first.
	httpBoot6 bool
	// rom keeps the NIC's iPXE option ROM; without it (UEFI) OVMF's own
	// PXE client does the first stage.
	rom bool
	// direct boots the staged kernel and initrd with -kernel and
	// -initrd (as if from a USB stick), no network boot; cmdline is added
	// to its kernel command line.
	direct  bool
	cmdline string
	// until ends the machine once the serial log matches it (for boots
	// that never reach the emulator); empty: wait for the marker. With
	// untilAfter, only what follows untilAfter's first showing counts.
	until, untilAfter string
	// keys are typed on the serial console once the serial log shows
	// typeAt (the console is then a socket whose log is the serial log).
	typeAt, keys string
	limit        time.Duration
	// qemuArgs are more arguments of QEMU (disks).
	qemuArgs []string
	// reboot lets the machine reboot (QEMU without -no-reboot), as a
	// discovery boot whose agent reboots it into the install needs.
	reboot bool
	// stop ends the machine once closed: an outcome seen off the serial
	// console (a packet, a log line), so a boot that shows it ends then,
	// not at its limit.
	stop <-chan struct{}
}

// bootMenuWait is the boot menu wait (QEMU -boot splash-time, in ms) of
// an httpBoot6 machine. OVMF connects the NIC before that wait, so its
// IPv6 stack starts then; duplicate address detection of the link-local
// address takes up to 2 s (a random delay of up to 1 s, one probe, 1 s),
// and HTTP boot over IPv6 fails if it starts sooner. 2 s was too short
// in a run; 4 s left 2.3 s to spare (session 45, tcpdump in the lab).
const bootMenuWait = "4000"

// machine is a finished QEMU run.
type machine struct {
	opts     vmOptions
	serial   string
	took     time.Duration
	marker   string // OK, REFUSED or FAIL; empty without a marker
	detail   string
	duration time.Duration
}

// boot runs a machine on a new tap of the lab's bridge until it powers
// off, its until pattern shows, or its time limit.
func (l *bootLab) boot(t *testing.T, o vmOptions) *machine {
	t.Helper()
	return l.bootAll(t, o)[0]
}

// bootAll runs machines at once. They start together, holding a
// qemuSlots slot each, and each machine gives its slot back as it ends:
// a short boot beside a long one frees its core for another test's
// machine.
func (l *bootLab) bootAll(t *testing.T, opts ...vmOptions) []*machine {
	t.Helper()
	ctx := context.Background()
	if err := qemuSlots.Acquire(ctx, int64(len(opts))); err != nil {
		t.Fatal(err)
	}
	started := 0 // machines started: each gives its slot back itself
	defer func() { qemuSlots.Release(int64(len(opts) - started)) }()
	out := make([]*machine, len(opts))
	var wg sync.WaitGroup
	for i, o := range opts {
		l.taps++
		tap := fmt.Sprintf("pnnb%dt%d", l.n, l.taps)
		run(t, "ip", "-n", l.site, "tuntap", "add", "dev", tap, "mode", "tap")
		run(t, "ip", "-n", l.site, "link", "set", tap, "master", "br0", "up")
		started++
		wg.Go(func() {
			defer qemuSlots.Release(1)
			out[i] = l.qemu(o, tap)
		})
	}
	wg.Wait()
	for _, m := range out {
		how := "BIOS"
		if m.opts.uefi {
			how = "UEFI"
		}
		if m.opts.secureBoot {
			how += " Secure Boot"
		}
		if m.opts.httpBoot {
			how += " HTTP"
		}
		if m.opts.ipv6PXE {
			how += " IPv6"
		}
		if m.opts.httpBoot6 {
			how += " HTTP IPv6"
		}
		if m.opts.direct {
			how += " direct kernel"
		}
		line := fmt.Sprintf("netboot %s: %s boot of %s took %s (%s)", t.Name(), how, m.opts.name, m.took.Round(100*time.Millisecond), orNone(m.marker))
		t.Log(line)
		recordTime(line)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("serial log of %s:\n%s", m.opts.name, m.serial)
			}
		})
	}
	return out
}

// vmDisk makes a raw disk image of size (qemu-img's units: 64M) named
// id.img in dir and returns its path and the QEMU arguments that attach it
// as device, a QEMU device with its properties ("virtio-blk-pci,serial=S",
// "nvme,serial=S").
func vmDisk(t *testing.T, dir, id, size, device string) (img string, qemuArgs []string) {
	t.Helper()
	img = filepath.Join(dir, id+".img")
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "raw", img, size).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v\n%s", err, out)
	}
	return img, []string{"-drive", "if=none,id=" + id + ",format=raw,file=" + img, "-device", device + ",drive=" + id}
}

func orNone(s string) string {
	if s == "" {
		return "no marker"
	}
	return s
}

// recordTime appends a boot's duration to $PLASMA_ARTIFACTS/netboot-times.txt,
// which CI prints.
func recordTime(line string) {
	dir := os.Getenv("PLASMA_ARTIFACTS")
	if dir == "" {
		return
	}
	os.MkdirAll(dir, 0o755)
	f, err := os.OpenFile(filepath.Join(dir, "netboot-times.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintln(f, time.Now().UTC().Format(time.RFC3339), line)
		f.Close()
	}
}

func (l *bootLab) qemu(o vmOptions, tap string) *machine {
	m := &machine{opts: o}
	dir := filepath.Join(l.dir, "vm-"+o.name)
	os.MkdirAll(dir, 0o755)
	serial := filepath.Join(dir, "serial.log")
	args := []string{"netns", "exec", l.site, "qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-m", "512", "-smp", "1", "-nographic", "-monitor", "none",
		"-smbios", "type=1,serial=E2E-" + strings.ToUpper(o.name),
		"-uuid", "e2e00000-0000-4000-8000-" + strings.ReplaceAll(o.mac, ":", ""),
		"-netdev", "tap,id=n0,ifname=" + tap + ",script=no,downscript=no"}
	if !o.reboot {
		args = append(args, "-no-reboot")
	}
	sock := filepath.Join(dir, "serial.sock")
	if o.keys != "" {
		args = append(args, "-chardev", "socket,id=s0,server=on,wait=off,path="+sock+",logfile="+serial, "-serial", "chardev:s0")
	} else {
		args = append(args, "-serial", "file:"+serial)
	}
	args = append(args, o.qemuArgs...)
	nic := "virtio-net-pci,netdev=n0,mac=" + o.mac + ",bootindex=1"
	if !o.rom {
		nic += ",romfile="
	}
	args = append(args, "-device", nic)
	switch {
	case o.uefi && o.secureBoot:
		vars := filepath.Join(dir, "vars.fd")
		b, _ := os.ReadFile(ovmfVarsMS)
		os.WriteFile(vars, b, 0o644)
		args = append(args, "-machine", "q35,smm=on", "-global", "driver=cfi.pflash01,property=secure,value=on",
			"-drive", "if=pflash,format=raw,unit=0,readonly=on,file="+ovmfCodeMS, "-drive", "if=pflash,format=raw,unit=1,file="+vars)
	case o.uefi:
		vars := filepath.Join(dir, "vars.fd")
		b, _ := os.ReadFile(ovmfVars)
		os.WriteFile(vars, b, 0o644)
		args = append(args, "-machine", "q35", "-drive", "if=pflash,format=raw,unit=0,readonly=on,file="+ovmfCode, "-drive", "if=pflash,format=raw,unit=1,file="+vars)
	default:
		args = append(args, "-machine", "pc")
	}
	if o.uefi && o.ipv6PXE {
		args = append(args, "-fw_cfg", "name=opt/org.tianocore/IPv4PXESupport,string=n")
	}
	if o.uefi && o.httpBoot6 {
		args = append(args, "-fw_cfg", "name=opt/org.tianocore/IPv4PXESupport,string=n", "-fw_cfg", "name=opt/org.tianocore/IPv6PXESupport,string=n",
			"-fw_cfg", "name=opt/org.tianocore/IPv4Support,string=n", "-boot", "menu=on,splash-time="+bootMenuWait)
	}
	if o.uefi && o.httpBoot {
		args = append(args, "-fw_cfg", "name=opt/org.tianocore/IPv4PXESupport,string=n", "-fw_cfg", "name=opt/org.tianocore/IPv6Support,string=n")
	}
	if o.direct {
		rel := filepath.Join(l.state, "assets", "9.2-1")
		args = append(args, "-kernel", filepath.Join(rel, "linux26"), "-initrd", filepath.Join(rel, "initrd-netboot.img"), "-append", strings.TrimSpace("console=ttyS0 panic=-1 proxmox-start-auto-installer "+o.cmdline))
	} else if !o.uefi {
		args = append(args, "-boot", "n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", args...)
	var qlog bytes.Buffer
	cmd.Stdout, cmd.Stderr = &qlog, &qlog
	start := time.Now()
	if err := cmd.Start(); err != nil {
		m.serial = err.Error()
		return m
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	typed := false
wait:
	for {
		select {
		case <-done:
			break wait
		case <-o.stop:
			cmd.Process.Kill()
			<-done
			break wait
		case <-tick.C:
			if o.keys != "" && !typed {
				if b, _ := os.ReadFile(serial); bytes.Contains(b, []byte(o.typeAt)) {
					typed = typeKeys(sock, serial, o.keys, &qlog)
				}
			}
			if o.until != "" {
				b, _ := os.ReadFile(serial)
				if o.untilAfter != "" {
					_, b, _ = bytes.Cut(b, []byte(o.untilAfter))
				}
				if bytes.Contains(b, []byte(o.until)) {
					time.Sleep(2 * time.Second) // a little longer: nothing else may follow
					cmd.Process.Kill()
					<-done
					break wait
				}
			}
		}
	}
	m.took = time.Since(start)
	b, _ := os.ReadFile(serial)
	m.serial = string(b)
	if ctx.Err() != nil {
		m.serial += fmt.Sprintf("\n[test: QEMU killed after its limit of %s]\n", o.limit)
	}
	if qlog.Len() > 0 {
		m.serial += "\n[qemu output]\n" + qlog.String()
	}
	if s := markerRE.FindStringSubmatch(m.serial); s != nil {
		m.marker, m.detail = s[1], strings.TrimSpace(s[2])
	}
	return m
}

// typeKeys types keys on the serial console's socket a byte at a time,
// each once the one before has echoed (the serial log, at path, grew) or
// after 2 s: firmware consoles drop what comes faster than they read. It
// says whether it could.
func typeKeys(sock, path, keys string, qlog *bytes.Buffer) bool {
	c, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		fmt.Fprintf(qlog, "[test: typing on the serial console: %v]\n", err)
		return false
	}
	defer c.Close()
	// Read what the guest writes (the log keeps it): a UART writes a
	// byte at a time, and a socket nobody reads fills in a few hundred.
	go io.Copy(io.Discard, c)
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	for i := 0; i < len(keys); i++ {
		before := size()
		if _, err := c.Write([]byte{keys[i]}); err != nil {
			fmt.Fprintf(qlog, "[test: typing on the serial console: %v]\n", err)
			return false
		}
		for end := time.Now().Add(2 * time.Second); size() == before && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// wantOK wants the emulator's OK marker with an FQDN starting with fqdn.
func (m *machine) wantOK(t *testing.T, fqdn string) {
	t.Helper()
	if m.marker != "OK" || !strings.Contains(m.detail, "fqdn="+fqdn) {
		t.Errorf("%s: marker %s %q; want OK with fqdn=%s…", m.opts.name, orNone(m.marker), m.detail, fqdn)
	}
}

// wantDetail wants each of parts in the marker line's details.
func (m *machine) wantDetail(t *testing.T, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(m.detail, p) {
			t.Errorf("%s: marker details %q lack %q", m.opts.name, m.detail, p)
		}
	}
}

func (m *machine) wantSerial(t *testing.T, s string) {
	t.Helper()
	if !strings.Contains(m.serial, s) {
		t.Errorf("%s: the serial log does not show %q", m.opts.name, s)
	}
}
