package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/internal/hostname"
	"github.com/plasmactl/plasma-node/ipam"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

// Check statuses of a [ValidateCheck].
const (
	CheckOK      = "ok"
	CheckWarning = "warning"
	CheckError   = "error"
)

// ValidateCheck is one check of one node.
type ValidateCheck struct {
	// Name is what was checked: hostname, public_ip, private_ip, zones,
	// provider_metadata, pool.
	Name string `json:"name" yaml:"name"`
	// Status is [CheckOK], [CheckWarning] or [CheckError].
	Status string `json:"status" yaml:"status"`
	// Value is the value checked, as the node file has it.
	Value string `json:"value" yaml:"value"`
	// Message says what is wrong; empty when Status is ok.
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
}

// ValidatedNode is the checks of one node.
type ValidatedNode struct {
	// Hostname is the node's name; for a broken file, its file name
	// without ".yaml".
	Hostname string `json:"hostname" yaml:"hostname"`
	// Platform is the platform holding it.
	Platform string `json:"platform" yaml:"platform"`
	// Valid reports that no check is an error.
	Valid bool `json:"valid" yaml:"valid"`
	// Broken reports that its file could not be read: its one check,
	// named "file", says why.
	Broken bool `json:"broken,omitempty" yaml:"broken,omitempty"`
	// Checks are the checks, in a fixed order.
	Checks []ValidateCheck `json:"checks" yaml:"checks"`
	// HasErrors reports that a check is an error.
	HasErrors bool `json:"has_errors" yaml:"has_errors"`
}

// ValidatedPlatform is the checks of one platform.yaml: one error check
// per setting at fault, named by its dotted path ("dns.domain"), or a
// "file" check when the file cannot be read.
type ValidatedPlatform struct {
	// Platform is the platform's name.
	Platform string `json:"platform" yaml:"platform"`
	// File is its platform.yaml.
	File string `json:"file" yaml:"file"`
	// Valid reports that no check is an error.
	Valid bool `json:"valid" yaml:"valid"`
	// Broken reports that the file could not be read.
	Broken bool `json:"broken,omitempty" yaml:"broken,omitempty"`
	// Checks are the settings at fault; empty when Valid.
	Checks []ValidateCheck `json:"checks" yaml:"checks"`
}

// ValidateResult is plasmactl-node's node:validate result, with the
// platforms checked beside the nodes.
type ValidateResult struct {
	// Platforms are the platforms checked, sorted by name; never nil.
	Platforms []ValidatedPlatform `json:"platforms" yaml:"platforms"`
	// Nodes are the nodes checked, sorted by platform, then hostname,
	// broken files among them; never nil.
	Nodes []ValidatedNode `json:"nodes" yaml:"nodes"`
	// TotalNodes is len(Nodes).
	TotalNodes int `json:"total_nodes" yaml:"total_nodes"`
	// ValidNodes counts the nodes without errors.
	ValidNodes int `json:"valid_nodes" yaml:"valid_nodes"`
	// HasErrors reports that a platform or a node has an error.
	HasErrors bool `json:"has_errors" yaml:"has_errors"`
	// HasWarnings reports that a node has a warning.
	HasWarnings bool `json:"has_warnings" yaml:"has_warnings"`
}

// Validate checks the platforms and nodes name selects: the platform it
// names, or the node it names, or, for "", every platform. Each
// platform's platform.yaml is checked even with no nodes (dns.domain,
// the address pools, the provider and its settings); a platform.yaml or
// node file that cannot be read is a row with why. Per node: the
// hostname (valid, and the file's name), the public and private IP
// (present, valid, unique within the platform), the zones (known to
// topology.yaml; a warning without one), the provider metadata (the
// platform's provider) and the private IP inside its pool (a warning,
// as register allows it). A name that is neither a platform nor a node
// is an error wrapping [nodes.ErrNodeNotFound].
func (p *Project) Validate(ctx context.Context, name string) (ValidateResult, error) {
	platforms, only, err := p.validateScope(ctx, name)
	if err != nil {
		return ValidateResult{}, err
	}
	p.warnUnknownKeys(ctx, platforms...)
	res := ValidateResult{Platforms: []ValidatedPlatform{}, Nodes: []ValidatedNode{}}
	for _, pl := range platforms {
		plat, vp, err := p.validatePlatform(ctx, pl)
		if err != nil {
			return ValidateResult{}, err
		}
		if only == "" {
			res.Platforms = append(res.Platforms, vp)
			res.HasErrors = res.HasErrors || !vp.Valid
			res.HasWarnings = res.HasWarnings || slices.ContainsFunc(vp.Checks, func(c ValidateCheck) bool { return c.Status == CheckWarning })
		}
		if plat == nil {
			continue
		}
		ns, broken, err := p.Store.ScanNodes(ctx, pl)
		if err != nil {
			return ValidateResult{}, err
		}
		var rows []ValidatedNode
		for _, n := range ns {
			if only != "" && n.Hostname != only {
				continue
			}
			v := ValidatedNode{Hostname: n.Hostname, Platform: pl, Checks: p.checkNode(plat, n, ns)}
			v.HasErrors = slices.ContainsFunc(v.Checks, func(c ValidateCheck) bool { return c.Status == CheckError })
			res.HasWarnings = res.HasWarnings || slices.ContainsFunc(v.Checks, func(c ValidateCheck) bool { return c.Status == CheckWarning })
			rows = append(rows, v)
		}
		for _, b := range broken {
			host := strings.TrimSuffix(filepath.Base(b.File), ".yaml")
			if only != "" && host != only {
				continue
			}
			rows = append(rows, ValidatedNode{Hostname: host, Platform: pl, Broken: true, HasErrors: true,
				Checks: []ValidateCheck{{Name: "file", Status: CheckError, Value: p.Store.Rel(b.File), Message: b.Err.Error()}}})
		}
		slices.SortStableFunc(rows, func(a, b ValidatedNode) int { return hostname.Compare(a.Hostname, b.Hostname) })
		for i := range rows {
			rows[i].Valid = !rows[i].HasErrors
			if rows[i].Valid {
				res.ValidNodes++
			}
			res.HasErrors = res.HasErrors || rows[i].HasErrors
		}
		res.Nodes = append(res.Nodes, rows...)
	}
	res.TotalNodes = len(res.Nodes)
	return res, nil
}

// validatePlatform reads and checks one platform.yaml: its row, and the
// platform when it could be read (nil when it is broken). Only a
// cancelled ctx is an error.
func (p *Project) validatePlatform(ctx context.Context, name string) (*nodes.Platform, ValidatedPlatform, error) {
	vp := ValidatedPlatform{Platform: name, File: p.Store.Rel(p.Store.PlatformPath(name)), Checks: []ValidateCheck{}}
	plat, err := p.Store.Platform(ctx, name)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, vp, cerr
		}
		vp.Broken = true
		vp.Checks = append(vp.Checks, ValidateCheck{Name: "file", Status: CheckError, Value: vp.File, Message: err.Error()})
		return nil, vp, nil
	}
	for _, k := range plat.UnknownKeys() {
		vp.Checks = append(vp.Checks, ValidateCheck{Name: k.Key, Status: CheckError, Message: k.String()})
	}
	for _, c := range p.checkPlatform(plat) {
		vp.Checks = append(vp.Checks, ValidateCheck{Name: c.field, Status: CheckError, Message: c.err.Error()})
	}
	vp.Valid = len(vp.Checks) == 0
	if prov, err := p.providers.Get(plat.Infrastructure.MetalProvider); err == nil && !isManual(plat) {
		for _, m := range providers.MissingSettings(prov, plat) {
			vp.Checks = append(vp.Checks, ValidateCheck{Name: m.Field, Status: CheckWarning,
				Message: fmt.Sprintf("%s: %s is not set: servers cannot be created without it; want %s", p.Store.Rel(plat.File()), m.Field, m.Want)})
		}
	}
	return plat, vp, nil
}

// validateScope returns the platforms to check and, when name is a
// node's, its hostname.
func (p *Project) validateScope(ctx context.Context, name string) ([]string, string, error) {
	if name == "" {
		ps, err := p.Store.Platforms(ctx)
		return ps, "", err
	}
	_, err := p.Store.Platform(ctx, name)
	if err == nil {
		return []string{name}, "", nil
	}
	if !errors.Is(err, nodes.ErrPlatformNotFound) {
		return nil, "", err
	}
	n, err := p.Store.FindNode(ctx, name)
	if errors.Is(err, nodes.ErrNodeNotFound) {
		return nil, "", fmt.Errorf("%q is neither a platform nor a node: %w", name, nodes.ErrNodeNotFound)
	}
	if err != nil {
		return nil, "", err
	}
	return []string{n.Platform}, n.Hostname, nil
}

// checkNode runs the checks of n, a node of plat among all.
func (p *Project) checkNode(plat *nodes.Platform, n *nodes.Node, all []*nodes.Node) []ValidateCheck {
	checks := []ValidateCheck{checkHostname(n)}
	checks = append(checks, checkAddr("public_ip", n, all, func(x *nodes.Node) string { return x.Network.PublicIP }, CheckWarning))
	checks = append(checks, checkAddr("private_ip", n, all, func(x *nodes.Node) string { return x.Network.PrivateIP }, CheckError))
	checks = append(checks, p.checkZones(n), checkProvider(plat, n), checkPool(plat, n))
	return checks
}

// checkHostname checks n's hostname: valid, and the name of its file
// (a node is found by its file's name).
func checkHostname(n *nodes.Node) ValidateCheck {
	c := ValidateCheck{Name: "hostname", Status: CheckOK, Value: n.Hostname}
	if err := nodes.ValidateHostname(n.Hostname); err != nil {
		c.Status, c.Message = CheckError, err.Error()
	} else if file := strings.TrimSuffix(filepath.Base(n.File()), ".yaml"); n.File() != "" && file != n.Hostname {
		c.Status, c.Message = CheckWarning, fmt.Sprintf("hostname %q differs from its file's name %s; want the file named %s.yaml, or hostname: %s", n.Hostname, filepath.Base(n.File()), n.Hostname, file)
	}
	return c
}

// checkAddr checks the address addr reads of n: present (missing is
// ifMissing), valid and used by no other node of all.
func checkAddr(name string, n *nodes.Node, all []*nodes.Node, addr func(*nodes.Node) string, ifMissing string) ValidateCheck {
	c := ValidateCheck{Name: name, Status: CheckOK, Value: addr(n)}
	if c.Value == "" {
		c.Status, c.Message = ifMissing, "not set"
		return c
	}
	a, err := ipam.ParseAddr(c.Value)
	if err != nil {
		c.Status, c.Message = CheckError, fmt.Sprintf("%q: %v", c.Value, err)
		return c
	}
	var others []string
	for _, o := range all {
		if b, err := netip.ParseAddr(addr(o)); o != n && err == nil && b.Unmap() == a.Unmap() {
			others = append(others, o.Hostname)
		}
	}
	if len(others) > 0 {
		c.Status, c.Message = CheckError, "also used by "+strings.Join(others, ", ")
	}
	return c
}

// checkZones checks n's zones against topology.yaml.
func (p *Project) checkZones(n *nodes.Node) ValidateCheck {
	c := ValidateCheck{Name: "zones", Status: CheckOK, Value: strings.Join(n.Zones, ",")}
	var bad []string
	for _, z := range n.Zones {
		if err := p.Topology.Check(z); err != nil {
			bad = append(bad, err.Error())
		}
	}
	switch {
	case len(bad) > 0:
		c.Status, c.Message = CheckError, strings.Join(bad, "; ")
	case p.Topology == nil && len(n.Zones) > 0:
		c.Status, c.Message = CheckWarning, "no "+topologyFile+": zones not checked"
	}
	return c
}

// checkProvider checks that n's provider metadata is the platform's
// provider's.
func checkProvider(plat *nodes.Platform, n *nodes.Node) ValidateCheck {
	m := n.ProviderMetadata
	c := ValidateCheck{Name: "provider_metadata", Status: CheckOK, Value: m.Provider}
	want := plat.Infrastructure.MetalProvider
	switch {
	case m.Provider != "" && want != "" && m.Provider != want:
		c.Status, c.Message = CheckError, fmt.Sprintf("provider %s, but platform %s uses %s", m.Provider, plat.Name, want)
	case m.ServerID != "" && isManual(plat):
		c.Status, c.Message = CheckWarning, "server id "+m.ServerID+" on a manual platform: nothing manages it"
	}
	return c
}

// checkPool checks that n's private IP is inside the address pool of
// its pool (by zones), else networking.private_network.
func checkPool(plat *nodes.Platform, n *nodes.Node) ValidateCheck {
	c := ValidateCheck{Name: "pool", Status: CheckOK}
	ipPool := ""
	for _, name := range slices.Sorted(maps.Keys(plat.Pools)) {
		if pool := plat.Pools[name]; sameSet(pool.Zones, n.Zones) {
			c.Value, ipPool = name, pool.IPPool
			break
		}
	}
	a, err := netip.ParseAddr(n.Network.PrivateIP)
	if err != nil {
		return c // the private_ip check says so
	}
	pool, err := poolFor(plat, ipPool)
	if err != nil {
		c.Status, c.Message = CheckError, err.Error()
		return c
	}
	if !pool.Contains(a.Unmap()) {
		c.Status, c.Message = CheckWarning, fmt.Sprintf("private IP %s is outside %s", a, pool)
	}
	return c
}
