package plasmanode

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/ipam"
	"github.com/plasmactl/plasma-node/nodes"
)

// RegisterOptions describe a node added by hand.
type RegisterOptions struct {
	// Platform the node joins. Required; it must exist.
	Platform string
	// Hostname of the node, an RFC 1123 label. Required.
	Hostname string
	// PublicIP is the node's public address. Optional.
	PublicIP string
	// PrivateIP is the node's private address. Default: the lowest free
	// address of the platform's pool.
	PrivateIP string
	// Zones the node is allocated to; a path without "platform." gets it.
	Zones []string
	// IPPool names the networking.ip_pools entry to allocate from.
	// Default: networking.private_network.
	IPPool string
}

// Register writes a new node file for a machine that already exists. It
// allocates the private IP from the platform's pool when none is given,
// and refuses an address another node of the platform already uses
// (errors wrap [ipam.ErrInUse]). On any error nothing is written.
func (p *Project) Register(ctx context.Context, o RegisterOptions) (*nodes.Node, error) {
	if err := nodes.ValidateHostname(o.Hostname); err != nil {
		return nil, err
	}
	var zs []string
	for _, z := range o.Zones {
		n, err := p.zone(z)
		if err != nil {
			return nil, err
		}
		zs = append(zs, n)
	}
	slices.Sort(zs)
	zs = slices.Compact(zs)
	pub, err := parseAddr("PublicIP", o.PublicIP)
	if err != nil {
		return nil, err
	}
	priv, err := parseAddr("PrivateIP", o.PrivateIP)
	if err != nil {
		return nil, err
	}
	plat, unlock, err := p.openPlatform(ctx, o.Platform, "add", true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	existing, err := p.Store.Nodes(ctx, o.Platform)
	if err != nil {
		return nil, err
	}
	for _, n := range existing {
		if n.Hostname == o.Hostname {
			return nil, fmt.Errorf("node %s in platform %s: %w (%s)", o.Hostname, o.Platform, nodes.ErrExists, p.Store.NodePath(o.Platform, o.Hostname))
		}
	}
	if err := checkFree(existing, pub, func(n *nodes.Node) string { return n.Network.PublicIP }, "PublicIP"); err != nil {
		return nil, err
	}
	if err := checkFree(existing, priv, func(n *nodes.Node) string { return n.Network.PrivateIP }, "PrivateIP"); err != nil {
		return nil, err
	}
	pool, err := poolFor(plat, o.IPPool)
	if err != nil {
		return nil, err
	}
	if priv.IsValid() && pool.Contains(priv) {
		if err := pool.Check(priv, nil); err != nil {
			return nil, &OptionError{Field: "PrivateIP", Err: err}
		}
	}
	// Warnings only once the input is known to be good: bad input
	// fails with its error alone.
	p.warnNewZones(ctx, o.Platform, zs)
	if !priv.IsValid() {
		got, err := pool.Allocate(usedPrivateIPs(existing), 1)
		if err != nil {
			return nil, fmt.Errorf("platform %s: %w", o.Platform, err)
		}
		priv = got[0]
	} else if !pool.Contains(priv) {
		p.log.Warn("private IP is outside the platform's pool", "node", o.Hostname, "ip", priv, "pool", pool.Name(), "network", pool.Span())
	}
	n := &nodes.Node{
		Hostname: o.Hostname,
		Platform: o.Platform,
		Zones:    zs,
		Network:  nodes.Network{PrivateIP: priv.String()},
	}
	if pub.IsValid() {
		n.Network.PublicIP = pub.String()
	}
	n.K8sLabels = zoneLabels(nil, nil, zs)
	if err := p.Store.CreateNode(ctx, n); err != nil {
		return nil, err
	}
	p.log.Info("node registered", "node", n.String(), "private_ip", n.Network.PrivateIP)
	return n, nil
}

// parseAddr parses s, the address of the options field named field; ""
// is no address.
func parseAddr(field, s string) (netip.Addr, error) {
	if s == "" {
		return netip.Addr{}, nil
	}
	a, err := ipam.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, &OptionError{Field: field, Value: s, Err: err}
	}
	return a, nil
}

// checkFree refuses a, the address of the options field named field,
// when a node of existing has it in the field of the node that addr
// reads.
func checkFree(existing []*nodes.Node, a netip.Addr, addr func(*nodes.Node) string, field string) error {
	if !a.IsValid() {
		return nil
	}
	for _, n := range existing {
		if b, err := netip.ParseAddr(addr(n)); err == nil && b.Unmap() == a {
			return &OptionError{Field: field, Err: fmt.Errorf("%s is already used by node %s (%s): %w", a, n.Hostname, n.File(), ipam.ErrInUse)}
		}
	}
	return nil
}

// usedPrivateIPs returns the set of private addresses the nodes use, the
// only record of allocations: node files are the source of truth.
func usedPrivateIPs(ns []*nodes.Node) *ipam.Used {
	var addrs []netip.Addr
	for _, n := range ns {
		if a, err := netip.ParseAddr(n.Network.PrivateIP); err == nil {
			addrs = append(addrs, a.Unmap())
		}
	}
	return ipam.NewUsed(addrs...)
}

// poolFor returns the address pool named name in the platform's
// networking.ip_pools, or, for "", the pool plasmactl-node allocates from:
// networking.private_network (default 192.168.0.0/16) without addresses
// ending in .0 or .255.
func poolFor(plat *nodes.Platform, name string) (*ipam.Pool, error) {
	if name == "" {
		cidr := plat.Networking.PrivateNetwork
		if cidr == "" {
			cidr = ipam.DefaultPrivateNetwork
		}
		pool, err := ipam.Default(cidr)
		if err != nil {
			return nil, fmt.Errorf("%s: networking.private_network: %w", plat.File(), err)
		}
		return pool, nil
	}
	c, ok := plat.Networking.IPPools[name]
	if !ok {
		var known []string
		for k := range plat.Networking.IPPools {
			known = append(known, k)
		}
		if len(known) == 0 {
			return nil, fmt.Errorf("ip pool %q: %w: no pools defined in %s networking.ip_pools; leave it out to allocate from networking.private_network", name, ipam.ErrInvalidPool, plat.File())
		}
		slices.Sort(known)
		return nil, fmt.Errorf("ip pool %q is not in %s networking.ip_pools: %w (known: %s)", name, plat.File(), ipam.ErrInvalidPool, strings.Join(known, ", "))
	}
	pool, err := ipam.New(ipam.Config{Name: name, CIDR: c.CIDR, Range: c.Range, Exclude: c.Exclude, Gateway: c.Gateway})
	if err != nil {
		return nil, fmt.Errorf("%s: networking.ip_pools.%s: %w", plat.File(), name, err)
	}
	return pool, nil
}

// zoneLabels returns the node's k8s_labels with one "<zone>: true" label
// per zone, as plasmactl-node's AddZoneLabels sets them; labels of zones
// the node no longer has (before) are dropped.
func zoneLabels(labels map[string]string, before, after []string) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		out[k] = v
	}
	for _, z := range before {
		if !slices.Contains(after, z) && out[z] == "true" {
			delete(out, z)
		}
	}
	for _, z := range after {
		out[z] = "true"
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
