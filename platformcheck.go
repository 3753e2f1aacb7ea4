package plasmanode

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

// platformProblem is a setting of a platform.yaml at fault: its dotted
// path ("dns.domain", "networking.ip_pools.lan", "infrastructure") and
// what is wrong, naming the file and line.
type platformProblem struct {
	field string
	err   error
}

// checkPlatform checks the settings of plat that every operation relies
// on, each by the one rule of its input: dns.domain
// ([nodes.ValidateDomain]), networking.private_network and each
// networking.ip_pools entry (ipam), the provider's name and the
// provider's own settings ([providers.ValidatePlatform]). It returns
// one check per setting at fault, in a fixed order; none when all are
// valid.
func (p *Project) checkPlatform(plat *nodes.Platform) []platformProblem {
	var out []platformProblem
	bad := func(field string, err error) {
		out = append(out, platformProblem{field, err})
	}
	if err := nodes.ValidateDomain(plat.DNS.Domain); err != nil {
		bad("dns.domain", fmt.Errorf("%s: dns.domain: %w", p.where(plat, "dns.domain"), err))
	}
	if _, err := poolFor(plat, ""); err != nil {
		bad("networking.private_network", err)
	}
	for _, name := range slices.Sorted(maps.Keys(plat.Networking.IPPools)) {
		if _, err := poolFor(plat, name); err != nil {
			bad("networking.ip_pools."+name, err)
		}
	}
	if u := plat.Infrastructure.ProvisionerURL; u != "" {
		if err := checkProvisionerURL(p.where(plat, "infrastructure.provisioner_url"), u); err != nil {
			bad("infrastructure.provisioner_url", err)
		}
	}
	if !isManual(plat) {
		prov, err := p.providers.Get(plat.Infrastructure.MetalProvider)
		if err == nil {
			err = providers.ValidatePlatform(prov, plat)
		}
		if err != nil {
			bad("infrastructure", fmt.Errorf("platform %s: %w", plat.Name, err))
		}
	}
	return out
}

// refusePlatform is checkPlatform's checks as one error, nil when all
// pass.
func (p *Project) refusePlatform(plat *nodes.Platform) error {
	var errs []error
	for _, c := range p.checkPlatform(plat) {
		errs = append(errs, c.err)
	}
	return errors.Join(errs...)
}

// where is plat's file and the line of field, as "file:line", for a
// message about the field.
func (p *Project) where(plat *nodes.Platform, field string) string {
	w := p.Store.Rel(plat.File())
	if w == "" {
		w = "platform.yaml"
	}
	if l := plat.Line(field); l > 0 {
		w = fmt.Sprintf("%s:%d", w, l)
	}
	return w
}
