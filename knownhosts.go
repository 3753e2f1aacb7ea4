package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

// KnownHost is one line of an OpenSSH known_hosts file: the names a node
// is reached by and one of its host keys.
type KnownHost struct {
	// Hostname is the node's hostname, as its node file has it.
	Hostname string `json:"hostname" yaml:"hostname"`
	// Names are the hostname, the FQDN and the address the key is for.
	Names []string `json:"names" yaml:"names"`
	// Key is the host public key, "TYPE BASE64".
	Key string `json:"key" yaml:"key"`
}

// Line is k as known_hosts has it: "NAME,NAME,… TYPE BASE64".
func (k KnownHost) Line() string { return strings.Join(k.Names, ",") + " " + k.Key }

// knownHostName is what a known_hosts host pattern may be here: a name or
// an address, without the pattern characters (*?!), commas or spaces.
var knownHostName = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,253}$`)

// ErrNoHostKeys: a platform's provider does not report its servers' host
// keys (it is not a bare-metal provider whose installer reports them).
var ErrNoHostKeys = errors.New("the provider reports no host keys")

// KnownHosts returns the known_hosts lines of platform's installed
// nodes, sorted by hostname: for each host key its installer reported
// ([providers.InstallReporter]), the node's hostname, the FQDN and the
// address it reported. Nodes that have not reported are left out.
// provisionerDir is as [ListOptions.ProvisionerDir]. A key that does
// not parse is left out and logged.
func (p *Project) KnownHosts(ctx context.Context, platform, provisionerDir string) ([]KnownHost, error) {
	plat, err := p.Store.Platform(ctx, platform)
	if err != nil {
		return nil, err
	}
	ns, err := p.Store.Nodes(ctx, platform)
	if err != nil {
		return nil, err
	}
	installed, reporting, err := p.installReports(ctx, plat, ns, provisionerDir)
	if err != nil {
		return nil, err
	}
	if len(ns) > 0 && !reporting {
		return nil, fmt.Errorf("platform %s: %w: its nodes are not bare metal (pxe)", platform, ErrNoHostKeys)
	}
	var out []KnownHost
	for _, n := range ns {
		if in, ok := installed[n.Hostname]; ok {
			out = append(out, p.knownHosts(n, in)...)
		}
	}
	slices.SortStableFunc(out, func(a, b KnownHost) int { return strings.Compare(a.Hostname, b.Hostname) })
	return out, nil
}

// installReports asks the providers of ns (nodes of platform plat) that
// are [providers.InstallReporter]s what their installed servers
// reported, by hostname; reporting says whether any node's provider is
// one.
func (p *Project) installReports(ctx context.Context, plat *nodes.Platform, ns []*nodes.Node, provisionerDir string) (map[string]providers.Installed, bool, error) {
	out := map[string]providers.Installed{}
	asked := map[string]bool{}
	reporting := false
	for _, n := range ns {
		name := n.ProviderMetadata.Provider
		if asked[name] {
			continue
		}
		asked[name] = true
		prov, err := p.providers.Get(name)
		if err != nil {
			continue
		}
		rep, ok := prov.(providers.InstallReporter)
		if !ok {
			continue
		}
		reporting = true
		at, err := p.Provisioner(plat, provisionerDir)
		if err != nil {
			return nil, true, err
		}
		installed, err := rep.Installed(ctx, at)
		if err != nil {
			return nil, true, err
		}
		for h, in := range installed {
			out[h] = in
		}
	}
	return out, reporting, nil
}

// knownHosts are the lines of n's reported host keys.
func (p *Project) knownHosts(n *nodes.Node, in providers.Installed) []KnownHost {
	names := hostNames(n, in)
	var out []KnownHost
	for _, k := range in.HostKeys {
		key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k))
		if err != nil {
			p.log.Warn("host key left out: it does not parse", "node", n.Hostname, "err", err)
			continue
		}
		out = append(out, KnownHost{Hostname: n.Hostname, Names: names, Key: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))})
	}
	return out
}

// hostNames are n's hostname, the reported FQDN and the reported
// address, each once, leaving out what known_hosts could take for a
// pattern.
func hostNames(n *nodes.Node, in providers.Installed) []string {
	var names []string
	add := func(s string) {
		if knownHostName.MatchString(s) && !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	add(n.Hostname)
	add(in.FQDN)
	if in.Address.IsValid() {
		add(in.Address.Addr().String())
	}
	return names
}
