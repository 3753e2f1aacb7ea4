package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// linkUp brings lo and nic up.
func linkUp(nic string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	for _, name := range []string{"lo", nic} {
		ifr, _ := unix.NewIfreq(name)
		if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
			return fmt.Errorf("%s flags: %w", name, err)
		}
		ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
		if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
			return fmt.Errorf("%s up: %w", name, err)
		}
	}
	return nil
}

// slaac brings nic up and waits until the kernel has configured a global
// IPv6 address on it from the site's router advertisement (not tentative
// any more), as the installer does on an IPv6-only segment (9.2.1).
func slaac(nic string, wait time.Duration) (net.IP, net.IPMask, error) {
	if err := linkUp(nic); err != nil {
		return nil, nil, err
	}
	for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if p, ok := globalIPv6(nic, ""); ok {
			return net.IP(p.Addr().AsSlice()), net.CIDRMask(p.Bits(), 128), nil
		}
	}
	b, _ := os.ReadFile("/proc/net/if_inet6")
	return nil, nil, fmt.Errorf("no global IPv6 address on %s within %s (no router advertisement?); /proc/net/if_inet6:\n%s", nic, wait, b)
}

// globalIPv6 reads /proc/net/if_inet6 for a global, non-tentative
// address of nic other than except.
func globalIPv6(nic, except string) (netip.Prefix, bool) {
	f, err := os.Open("/proc/net/if_inet6")
	if err != nil {
		return netip.Prefix{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// address ifindex prefixlen scope flags name
		fs := strings.Fields(sc.Text())
		if len(fs) != 6 || fs[5] != nic || fs[3] != "00" {
			continue
		}
		flags, _ := strconv.ParseUint(fs[4], 16, 8)
		raw, err := hex.DecodeString(fs[0])
		bits, _ := strconv.ParseUint(fs[2], 16, 8)
		if err != nil || len(raw) != 16 || flags&0x40 != 0 { // IFA_F_TENTATIVE
			continue
		}
		a := netip.AddrFrom16([16]byte(raw))
		if a.String() != except {
			return netip.PrefixFrom(a, int(bits)), true
		}
	}
	return netip.Prefix{}, false
}

// in6Ifreq is Linux's struct in6_ifreq, which SIOCSIFADDR takes on an
// AF_INET6 socket.
type in6Ifreq struct {
	addr      [16]byte
	prefixlen uint32
	ifindex   int32
}

// addIPv6 adds p to nic, as the installer's static network does.
func addIPv6(nic string, p netip.Prefix) error {
	ifc, err := net.InterfaceByName(nic)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	req := in6Ifreq{addr: p.Addr().As16(), prefixlen: uint32(p.Bits()), ifindex: int32(ifc.Index)}
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCSIFADDR, uintptr(unsafe.Pointer(&req))); errno != 0 {
		return fmt.Errorf("add %s to %s: %w", p, nic, errno)
	}
	return nil
}
