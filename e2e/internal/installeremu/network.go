package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/plasmactl/plasma-node/answer"
)

// nicUdev is what udev tells of a NIC, as far as the emulator plays it:
// INTERFACE, and ID_NET_NAME_MAC ("enx" and the MAC's hex digits), which
// systemd's net_id sets for a NIC with a permanent MAC.
func nicUdev(name string) map[string]string {
	mac := strings.ToLower(readSys("/sys/class/net/" + name + "/address"))
	return map[string]string{"INTERFACE": name, "ID_NET_NAME_MAC": "enx" + strings.ReplaceAll(mac, ":", "")}
}

// applyNetwork sets the answer's network up as the installer does: for
// from-answer, the first NIC in name order on which any network.filter
// glob matches its udev property gets network.cidr (in place of the
// DHCP lease), and the address is returned as the webhook reports it;
// for from-dhcp the lease stays.
func applyNetwork(n answer.Network, lease string) (string, error) {
	if n.Source != answer.NetworkFromAnswer {
		return lease, nil
	}
	names, _ := filepath.Glob("/sys/class/net/*")
	sort.Strings(names)
	nic := ""
	for _, p := range names {
		name := filepath.Base(p)
		if name == "lo" {
			continue
		}
		props := nicUdev(name)
		for k, glob := range n.Filter {
			if v, ok := props[k]; ok {
				if m, _ := path.Match(glob, v); m {
					nic = name
				}
			}
		}
		if nic != "" {
			break
		}
	}
	if nic == "" {
		return "", fmt.Errorf("network.filter %v matches no NIC", n.Filter)
	}
	p, err := netip.ParsePrefix(n.CIDR)
	if err != nil {
		return "", fmt.Errorf("network.cidr %q: %w", n.CIDR, err)
	}
	if p.Addr().Is6() {
		if gw, err := netip.ParseAddr(n.Gateway); err != nil || !(p.Masked().Contains(gw) || gw.IsLinkLocalUnicast()) {
			return "", errors.New("network.gateway is neither on network.cidr's network nor link-local")
		}
		if err := addIPv6(nic, p); err != nil {
			return "", err
		}
		step("static address %s on %s (filter %v)", p, nic, n.Filter)
		return p.String(), nil
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	ip := net.IP(p.Addr().AsSlice())
	mask := net.IP(net.CIDRMask(p.Bits(), 32))
	for _, set := range []struct {
		req uint
		v   net.IP
	}{{unix.SIOCSIFADDR, ip}, {unix.SIOCSIFNETMASK, mask}} {
		ifr, _ := unix.NewIfreq(nic)
		if err := ifr.SetInet4Addr(set.v.To4()); err != nil {
			return "", err
		}
		if err := unix.IoctlIfreq(fd, set.req, ifr); err != nil {
			return "", fmt.Errorf("set %s on %s: %w", set.v, nic, err)
		}
	}
	if gw, err := netip.ParseAddr(n.Gateway); err != nil || !p.Masked().Contains(gw) {
		return "", errors.New("network.gateway is not on network.cidr's network")
	}
	step("static address %s on %s (filter %v)", p, nic, n.Filter)
	return p.String(), nil
}
