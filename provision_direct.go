package plasmanode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

// DefaultProvisionerDir is node-provisioner's default state folder.
const DefaultProvisionerDir = "/var/lib/node-provisioner"

// EnvProvisionerDir is node-provisioner's variable for its state folder,
// read by [Project.ProvisionerDir] too.
const EnvProvisionerDir = "NODE_PROVISIONER_STATE_DIR"

// ProvisionerDir returns the node-provisioner state folder of a
// platform: explicit when set (an operation's ProvisionerDir), else
// [Options.ProvisionerDir], else $NODE_PROVISIONER_STATE_DIR, else the
// platform's infrastructure.provisioner_dir (relative to the project
// folder), else [DefaultProvisionerDir], as node-provisioner chooses its
// own.
func (p *Project) ProvisionerDir(plat *nodes.Platform, explicit string) string {
	switch {
	case explicit != "":
		return explicit
	case p.provisionerDir != "":
		return p.provisionerDir
	case os.Getenv(EnvProvisionerDir) != "":
		return os.Getenv(EnvProvisionerDir)
	case plat != nil && plat.Infrastructure.ProvisionerDir != "":
		d := plat.Infrastructure.ProvisionerDir
		if !filepath.IsAbs(d) {
			d = filepath.Join(p.Store.Dir(), d)
		}
		return d
	}
	return DefaultProvisionerDir
}

// provisionDirect is Provision for a provider that makes its servers
// itself: plan, gate, pools, apply, node files.
func (p *Project) provisionDirect(ctx context.Context, o ProvisionOptions, d providers.Direct, in providers.DirectInput,
	plat *nodes.Platform, existingNodes []*nodes.Node, res ProvisionResult) (ProvisionResult, error) {
	pl, err := d.Plan(ctx, in)
	if err != nil {
		return res, fmt.Errorf("plan %s: %w", d.Name(), err)
	}
	sum := pl.Summary()
	if ok, err := o.confirm(ctx, sum, in.Dir, nil, &res); !ok || err != nil {
		return res, err
	}
	if err := p.savePools(ctx, o.Platform, plat, in.Pools); err != nil {
		return res, err
	}
	servers, err := pl.Apply(ctx)
	if err != nil {
		return res, fmt.Errorf("apply %s plan of platform %s: %w", d.Name(), o.Platform, err)
	}
	res.Applied = !sum.Empty()
	res.Nodes, err = p.writeServers(ctx, plat, d.Name(), servers, existingNodes)
	return res, err
}

// Install states beside those of the registrations (pending, consumed,
// installed), as [Project.List] reports them.
const (
	// StateUnregistered: the provider has no record of the node.
	StateUnregistered = "unregistered"
	// StateUnknown: the provider's records could not be read.
	StateUnknown = "unknown"
)

// installStates fills in InstallState of the nodes made by a
// [providers.Direct] provider, from the records in each platform's
// provisioner folder (explicit, when set, for every platform).
func (p *Project) installStates(ctx context.Context, ns []*nodes.Node, explicit string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	states := map[string]map[string]string{} // platform -> hostname -> state
	for _, n := range ns {
		prov, err := p.providers.Get(n.ProviderMetadata.Provider)
		if err != nil {
			continue
		}
		d, ok := prov.(providers.Direct)
		if !ok {
			continue
		}
		st, ok := states[n.Platform]
		if !ok {
			plat, err := p.Store.Platform(ctx, n.Platform)
			if err != nil {
				return err
			}
			dir := p.ProvisionerDir(plat, explicit)
			if st, err = d.States(ctx, dir); err != nil {
				// The nodes are still listed: the state is what is unknown
				// (a folder of another user, say).
				p.log.Warn("cannot read install states", "platform", n.Platform, "dir", dir, "err", err)
				st = nil
			}
			states[n.Platform] = st
		}
		switch {
		case st == nil:
			n.InstallState = StateUnknown
		case st[n.Hostname] == "":
			n.InstallState = StateUnregistered
		default:
			n.InstallState = st[n.Hostname]
		}
	}
	return nil
}
