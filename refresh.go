package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

// RefreshOptions select the nodes [Project.Refresh] refreshes.
type RefreshOptions struct {
	// Platform is the platform whose node files are refreshed. Required.
	Platform string
	// ProvisionerDir is as [ListOptions.ProvisionerDir].
	ProvisionerDir string
}

// Refreshed is one installed node as [Project.Refresh] found it.
type Refreshed struct {
	// Node is the node, as hostname@platform.
	Node string `json:"node" yaml:"node"`
	// Address is the management address its installer reported ("" when
	// it reported none).
	Address string `json:"address,omitempty" yaml:"address,omitempty"`
	// Previous is the address its node file had, when the report
	// changed it; "" otherwise (also for a node file that had none).
	Previous string `json:"previous,omitempty" yaml:"previous,omitempty"`
	// HostKeys is how many host keys the node file now holds.
	HostKeys int `json:"host_keys" yaml:"host_keys"`
	// BootDisks are the disks the node file now lists, when its
	// installer reported the disks it installed on.
	BootDisks []string `json:"boot_disks,omitempty" yaml:"boot_disks,omitempty"`
	// Written says the node file changed.
	Written bool `json:"written" yaml:"written"`
}

// Refresh writes what the installer of each installed node of the
// platform reported ([providers.InstallReporter]) into its node file:
// network.installed_ip, installed_prefix and nic_names (the names the
// installer pinned), ssh_host_keys, and disks (the devices the system
// was installed on, when reported). The rest
// of the file, comments included, is kept; a file already up to date is
// not written. Nodes that have not reported are left as they are. It
// takes the platform's lock. A platform whose nodes' provider reports
// nothing is [ErrNoHostKeys].
func (p *Project) Refresh(ctx context.Context, o RefreshOptions) ([]Refreshed, error) {
	if o.Platform == "" {
		return nil, &OptionError{Field: "Platform", Err: errors.New("required")}
	}
	plat, unlock, err := p.lockPlatform(ctx, o.Platform, "refresh", true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ns, err := p.Store.Nodes(ctx, o.Platform)
	if err != nil {
		return nil, err
	}
	installed, reporting, err := p.installReports(ctx, plat, ns, o.ProvisionerDir)
	if err != nil {
		return nil, err
	}
	if len(ns) > 0 && !reporting {
		return nil, fmt.Errorf("platform %s: %w: its nodes are not bare metal (pxe)", o.Platform, ErrNoHostKeys)
	}
	var out []Refreshed
	for _, n := range ns {
		in, ok := installed[n.Hostname]
		if !ok {
			continue
		}
		r := Refreshed{Node: n.String()}
		before := n.Network.InstalledIP
		updated, err := p.Store.UpdateNode(ctx, n.Platform, n.Hostname, func(m *nodes.Node) error {
			applyReport(m, in)
			return nil
		})
		if err != nil {
			return out, err
		}
		r.Address, r.HostKeys = installedAddress(updated), len(updated.SSHHostKeys)
		if len(in.BootDisks) > 0 {
			r.BootDisks = updated.Disks
		}
		r.Written = !slices.Equal(n.SSHHostKeys, updated.SSHHostKeys) || before != updated.Network.InstalledIP || n.Network.InstalledPrefix != updated.Network.InstalledPrefix ||
			!maps.Equal(n.Network.NICNames, updated.Network.NICNames) ||
			!slices.Equal(n.Disks, updated.Disks)
		if before != "" && before != r.Address {
			r.Previous = before
			p.log.Warn("the installed address changed", "node", n.String(), "was", before, "now", r.Address)
		}
		out = append(out, r)
	}
	return out, nil
}

// applyReport sets n's installed address, pinned NIC names, host keys
// and disks to in's (each only when reported); keys
// that do not parse are left out. An address that is n's private_ip (a
// static install on the platform's install network) is kept there alone:
// installed_ip is for an address the site's DHCP server gave.
func applyReport(n *nodes.Node, in providers.Installed) {
	switch {
	case !in.Address.IsValid():
	case in.Address.Addr().String() == n.Network.PrivateIP:
		n.Network.InstalledIP, n.Network.InstalledPrefix = "", 0
	default:
		n.Network.InstalledIP, n.Network.InstalledPrefix = in.Address.Addr().String(), in.Address.Bits()
	}
	if len(in.NICNames) > 0 {
		n.Network.NICNames = maps.Clone(in.NICNames)
	}
	if keys := hostKeys(in.HostKeys); len(keys) > 0 {
		n.SSHHostKeys = keys
	}
	if len(in.BootDisks) > 0 {
		n.Disks = slices.Clone(in.BootDisks)
	}
}

// hostKeys are keys parsed and written back as "TYPE BASE64"; what does
// not parse is left out.
func hostKeys(keys []string) []string {
	var out []string
	for _, k := range keys {
		key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k))
		if err == nil {
			out = append(out, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))))
		}
	}
	return out
}

// installedAddress is the address n's node file says its installed
// system has: installed_ip, else, once it has host keys (a static
// install), private_ip; "" before it reported.
func installedAddress(n *nodes.Node) string {
	if n.Network.InstalledIP != "" || len(n.SSHHostKeys) == 0 {
		return n.Network.InstalledIP
	}
	return n.Network.PrivateIP
}

// staleFields names what n's node file says otherwise than its
// installer reported: "installed_ip" (with both values), "nic_names",
// "ssh_host_keys" and "disks".
func staleFields(n *nodes.Node, in providers.Installed) []string {
	var out []string
	if in.Address.IsValid() && installedAddress(n) != in.Address.Addr().String() {
		out = append(out, fmt.Sprintf("installed_ip %q, reported %s", n.Network.InstalledIP, in.Address.Addr()))
	}
	if len(in.NICNames) > 0 && !maps.Equal(in.NICNames, n.Network.NICNames) {
		out = append(out, "nic_names")
	}
	if keys := hostKeys(in.HostKeys); len(keys) > 0 && !slices.Equal(keys, n.SSHHostKeys) {
		out = append(out, "ssh_host_keys")
	}
	if len(in.BootDisks) > 0 && !slices.Equal(in.BootDisks, n.Disks) {
		out = append(out, "disks")
	}
	return out
}

// warnStale warns, for each installed node of ns whose node file differs
// from its installer's report, what differs and that refresh writes it.
// It reads only; a report that cannot be read is logged.
func (p *Project) warnStale(ctx context.Context, ns []*nodes.Node, explicit string) {
	byPlatform := map[string][]*nodes.Node{}
	for _, n := range ns {
		if n.InstallState == "installed" {
			byPlatform[n.Platform] = append(byPlatform[n.Platform], n)
		}
	}
	for platform, group := range byPlatform {
		plat, err := p.Store.Platform(ctx, platform)
		if err != nil {
			continue
		}
		installed, _, err := p.installReports(ctx, plat, group, explicit)
		if err != nil {
			p.log.Warn("cannot read the installers' reports", "platform", platform, "err", err)
			continue
		}
		for _, n := range group {
			if in, ok := installed[n.Hostname]; ok {
				if diff := staleFields(n, in); len(diff) > 0 {
					p.log.Warn("node file differs from what its installer reported; plasma-node refresh "+platform+" writes it", "node", n.String(), "differs", strings.Join(diff, "; "))
				}
			}
		}
	}
}
