//go:build linux

package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"golang.org/x/sys/unix"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// Options tune [Run]. The zero value is the discovery initrd's.
type Options struct {
	// Paths are sysfs and procfs; the zero value is /sys and /proc.
	Paths Paths
	// ModulesDir is the kernel's modules folder (modules.alias,
	// modules.dep and the modules); empty: the one folder under
	// /lib/modules. None there: no module is loaded.
	ModulesDir string
	// Mount mounts proc, sys and dev first (as PID 1 must).
	Mount bool
	// Timeout bounds the whole run; zero: 5 minutes.
	Timeout time.Duration
	// Logger receives the steps; nil discards them.
	Logger *slog.Logger
}

// Next is what the window asked of the machine once it kept its report.
type Next int

const (
	// NextPowerOff: the machine waits to be booted again ([PowerOff]).
	NextPowerOff Next = iota
	// NextInstall: an install-mode rule enrolled the machine; reboot it
	// ([Reboot]) and its next netboot is served the install.
	NextInstall
)

// String names n.
func (n Next) String() string {
	if n == NextInstall {
		return "install"
	}
	return "power off"
}

// Run discovers the machine and posts its report once to the window the
// kernel command line names, and returns what the window asked of it
// next ([discovery.ReplyInstall] is [NextInstall]). It writes no disk.
func Run(ctx context.Context, o Options) (Next, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if o.Mount {
		for _, m := range []struct{ src, dst, fs string }{{"proc", "/proc", "proc"}, {"sysfs", "/sys", "sysfs"}, {"devtmpfs", "/dev", "devtmpfs"}} {
			os.MkdirAll(m.dst, 0o755)
			if err := unix.Mount(m.src, m.dst, m.fs, unix.MS_NOSUID|unix.MS_NOEXEC, ""); err != nil && !errors.Is(err, unix.EBUSY) {
				return NextPowerOff, fmt.Errorf("mount %s: %w", m.dst, err)
			}
		}
	}
	cmdline, err := os.ReadFile(o.Paths.proc("cmdline"))
	if err != nil {
		return NextPowerOff, err
	}
	target, err := parseCmdline(string(cmdline))
	if err != nil {
		return NextPowerOff, err
	}
	// The firmware's SMBIOS tables are read once: what BMC they name
	// decides the extra modules, and what they skipped is logged below.
	bmc := readBMC(o.Paths)
	var extra []string
	if bmc.IPMI != "" && !bmc.Redfish.IsValid() {
		extra = ipmiModules(bmc.IPMI)
	}
	loadModules(ctx, log, o, extra)
	settle(ctx, o.Paths)
	var nic string
	if wantsIPv6(target) {
		var a netip.Addr
		if a, nic, err = slaac(ctx, o.Paths); err != nil {
			return NextPowerOff, err
		}
		log.Info("IPv6 address from the segment's router advertisement", "nic", nic, "ip", a.String())
	} else {
		var ip net.IP
		if ip, nic, err = lease(ctx, log, o.Paths); err != nil {
			return NextPowerOff, err
		}
		log.Info("address from DHCP", "nic", nic, "ip", ip)
	}
	rep := collect(o.Paths, bmc)
	rep.BootMAC = bootMAC(string(cmdline), read(o.Paths.sys("class/net", nic, "address")), rep.NICs)
	readIPMIBMC(ctx, log, &rep)
	log.Info("machine collected", "nics", len(rep.NICs), "disks", len(rep.Disks), "serial", rep.DMI.Serial, "boot_mac", rep.BootMAC,
		"bmc_address", rep.BMCAddress, "bmc_port", rep.BMCPort, "bmc_kind", rep.BMCKind, "bmc_ipmi", rep.BMCIPMI)
	for _, why := range bmc.Skipped {
		log.Info("no BMC address from an SMBIOS structure", "why", why)
	}
	return post(ctx, log, target, rep)
}

// PowerOff syncs and powers the machine off; it returns only on failure.
func PowerOff() error {
	unix.Sync()
	return unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
}

// Reboot syncs and restarts the machine, whose firmware then boots it
// from the network again; it returns only on failure.
func Reboot() error {
	unix.Sync()
	return unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART)
}

// moduleCompressed is finit_module's MODULE_INIT_COMPRESSED_FILE: the
// kernel decompresses the module itself.
const moduleCompressed = 4

// loadModules loads, in rounds, the modules the devices' modaliases ask
// for, and those named in extra, until a round loads none (a loaded bus
// driver brings devices of its own). A module that fails is logged and
// skipped.
func loadModules(ctx context.Context, log *slog.Logger, o Options, extra []string) {
	dir := o.ModulesDir
	if dir == "" {
		dirs, _ := filepath.Glob("/lib/modules/*")
		if len(dirs) != 1 {
			log.Warn("no one kernel modules folder under /lib/modules: loading none", "found", len(dirs))
			return
		}
		dir = dirs[0]
	}
	af, err := os.Open(filepath.Join(dir, "modules.alias"))
	if err != nil {
		log.Warn("no modules.alias: loading no module", "err", err)
		return
	}
	defer af.Close()
	df, err := os.Open(filepath.Join(dir, "modules.dep"))
	if err != nil {
		log.Warn("no modules.dep: loading no module", "err", err)
		return
	}
	defer df.Close()
	mods, err := parseModules(af, df)
	if err != nil {
		log.Warn("modules.alias or modules.dep unreadable", "err", err)
		return
	}
	done := map[string]bool{}
	for round := 0; round < 8 && ctx.Err() == nil; round++ {
		files := mods.Order(append(mods.For(Modaliases(o.Paths.sys())), extra...), done)
		if len(files) == 0 {
			return
		}
		for _, f := range files {
			if err := insmod(filepath.Join(dir, f)); err != nil {
				log.Debug("module not loaded", "module", f, "err", err)
			} else {
				log.Info("module loaded", "module", filepath.Base(f))
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func insmod(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	flags := 0
	if !strings.HasSuffix(path, ".ko") {
		flags = moduleCompressed
	}
	err = unix.FinitModule(int(f.Fd()), "", flags)
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	return err
}

// settle waits until the block devices and NICs stop changing for a
// second (drivers probe their devices after they load), at most 15 s.
func settle(ctx context.Context, p Paths) {
	var last string
	stable := 0
	for i := 0; i < 30 && ctx.Err() == nil; i++ {
		a, _ := filepath.Glob(p.sys("block/*"))
		b, _ := filepath.Glob(p.sys("class/net/*"))
		now := strings.Join(append(a, b...), " ")
		if now == last {
			if stable++; stable >= 2 {
				return
			}
		} else {
			last, stable = now, 0
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// lease brings the Ethernet NICs up and takes the first DHCP lease one
// of them gets, setting its address.
func lease(ctx context.Context, log *slog.Logger, p Paths) (net.IP, string, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return nil, "", err
	}
	defer unix.Close(fd)
	setUp(fd, "lo")
	var tried []string
	for _, n := range nics(p) {
		name := nicName(p, n.MAC)
		if name == "" || setUp(fd, name) != nil {
			continue
		}
		tried = append(tried, name)
		ip, mask, err := dhcp(ctx, name)
		if err != nil {
			log.Info("no lease", "nic", name, "err", err)
			continue
		}
		for _, set := range []struct {
			req uint
			v   net.IP
		}{{unix.SIOCSIFADDR, ip}, {unix.SIOCSIFNETMASK, mask}} {
			ifr, _ := unix.NewIfreq(name)
			ifr.SetInet4Addr(set.v)
			if err := unix.IoctlIfreq(fd, set.req, ifr); err != nil {
				return nil, "", fmt.Errorf("set %s on %s: %w", set.v, name, err)
			}
		}
		return ip, name, nil
	}
	return nil, "", fmt.Errorf("no NIC got a DHCP lease (tried %s)", strings.Join(tried, ", "))
}

func nicName(p Paths, mac string) string {
	names, _ := filepath.Glob(p.sys("class/net/*"))
	slices.Sort(names)
	for _, dir := range names {
		if m, ok := answer.CanonicalMAC(read(filepath.Join(dir, "address"))); ok && m == mac {
			return filepath.Base(dir)
		}
	}
	return ""
}

func setUp(fd int, name string) error {
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

func dhcp(ctx context.Context, nic string) (net.IP, net.IP, error) {
	c, err := nclient4.New(nic, nclient4.WithTimeout(2*time.Second), nclient4.WithRetry(5))
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	l, err := c.Request(ctx)
	if err != nil {
		return nil, nil, err
	}
	mask := net.IP(l.ACK.SubnetMask()).To4()
	if mask == nil {
		mask = net.IPv4(255, 255, 255, 0).To4()
	}
	return l.ACK.YourIPAddr.To4(), mask, nil
}

// post sends the report with the window's token, again on a failure to
// connect or a 5xx other than a full inbox, until ctx ends, and returns
// what the window's reply asks next.
func post(ctx context.Context, log *slog.Logger, t Target, rep discovery.Report) (Next, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return NextPowerOff, err
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
		if err != nil {
			return NextPowerOff, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+t.Token)
		resp, err := hc.Do(req)
		if err == nil {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			switch {
			case resp.StatusCode == http.StatusOK:
				next := NextPowerOff
				if strings.TrimSpace(string(msg)) == discovery.ReplyInstall {
					next = NextInstall
				}
				log.Info("report posted", "url", t.URL, "next", next.String())
				return next, nil
			case resp.StatusCode < 500 || resp.StatusCode == http.StatusServiceUnavailable:
				return NextPowerOff, fmt.Errorf("the window refused the report: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
			}
			err = fmt.Errorf("%s", resp.Status)
		}
		log.Info("post failed; trying again", "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return NextPowerOff, fmt.Errorf("post the report: %w (last: %w)", ctx.Err(), err)
		case <-time.After(2 * time.Second):
		}
	}
}

// slaac brings the NICs up and waits until the kernel has a global IPv6
// address on one of them, from the segment's router advertisement
// (SLAAC): the window's URL is an IPv6 one.
func slaac(ctx context.Context, p Paths) (netip.Addr, string, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return netip.Addr{}, "", err
	}
	defer unix.Close(fd)
	setUp(fd, "lo")
	for _, n := range nics(p) {
		if name := nicName(p, n.MAC); name != "" {
			setUp(fd, name)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		if f, err := os.Open(p.proc("net", "if_inet6")); err == nil {
			a, nic, ok := globalIPv6(f)
			f.Close()
			if ok {
				return a, nic, nil
			}
		}
		select {
		case <-ctx.Done():
			return netip.Addr{}, "", errors.New("no global IPv6 address within 30 s: no router advertisement on the segment")
		case <-time.After(200 * time.Millisecond):
		}
	}
}
