package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/plasmactl/plasma-node/internal/hostport"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/registrar"
)

// DefaultProvisionerDir is node-provisioner's default state folder.
const DefaultProvisionerDir = registrar.DefaultDir

// EnvProvisionerDir is node-provisioner's variable for its state folder,
// read by [Project.ProvisionerDir] too.
const EnvProvisionerDir = registrar.EnvDir

// envProvisionerSecretsDir is node-provisioner's variable for its secrets
// folder, where a local pxe platform's BMC passwords go.
const envProvisionerSecretsDir = registrar.EnvSecretsDir

// envProvisionerToken holds the bearer token for node-provisioner's
// management API; it is read from nowhere else.
const envProvisionerToken = registrar.EnvToken

// envProvisionerFingerprint pins the API's certificate when the platform
// names none.
const envProvisionerFingerprint = registrar.EnvFingerprint

// ErrInvalidProvisioner: a platform's infrastructure.provisioner_url,
// provisioner_fingerprint or provisioner_token cannot be used.
var ErrInvalidProvisioner = errors.New("invalid node-provisioner settings")

// ErrProvisionerUnreachable: the registrations a destroy or delete must
// withdraw are not where the platform says they are (a node-provisioner
// state folder that does not exist or holds none of them, an API that
// does not answer); nothing was changed.
var ErrProvisionerUnreachable = errors.New("registrations not reachable")

// Provisioner returns where a platform's registrations are: the folder
// explicit names when set (an operation's ProvisionerDir), else
// [Options.ProvisionerDir], else $NODE_PROVISIONER_STATE_DIR, else the
// API of the platform's infrastructure.provisioner_url (token from
// $NODE_PROVISIONER_TOKEN, certificate pinned by provisioner_fingerprint
// or $NODE_PROVISIONER_FINGERPRINT), else the folder
// [Project.ProvisionerDir] picks.
//
// Errors: [ErrInvalidProvisioner] for a token in platform.yaml or a URL
// that is not https; [providers.ErrNoCredentials] for an API without a
// token.
func (p *Project) Provisioner(plat *nodes.Platform, explicit string) (providers.Location, error) {
	local := providers.Location{Dir: p.ProvisionerDir(plat, explicit), SecretsDir: os.Getenv(envProvisionerSecretsDir)}
	if explicit != "" || p.provisionerDir != "" || os.Getenv(EnvProvisionerDir) != "" || plat == nil {
		return local, nil
	}
	inf := plat.Infrastructure
	where := plat.File()
	if where == "" {
		where = "platform.yaml"
	}
	if inf.ProvisionerToken != "" {
		return providers.Location{}, fmt.Errorf("%s: infrastructure.provisioner_token: %w: a credential does not belong in platform.yaml; set %s in the environment",
			where, ErrInvalidProvisioner, envProvisionerToken)
	}
	if inf.ProvisionerURL == "" {
		if inf.ProvisionerFingerprint != "" {
			return providers.Location{}, fmt.Errorf("%s: infrastructure.provisioner_fingerprint: %w: it pins the API of provisioner_url, which is not set", where, ErrInvalidProvisioner)
		}
		return local, nil
	}
	if err := checkProvisionerURL(where, inf.ProvisionerURL); err != nil {
		return providers.Location{}, err
	}
	fp := inf.ProvisionerFingerprint
	if fp == "" {
		fp = os.Getenv(envProvisionerFingerprint)
	}
	token := os.Getenv(envProvisionerToken)
	if token == "" {
		return providers.Location{}, fmt.Errorf("platform %s: node-provisioner API %s: %w: set %s to a token of the register scope made by node-provisioner's operator",
			plat.Name, inf.ProvisionerURL, providers.ErrNoCredentials, envProvisionerToken)
	}
	return providers.Location{Remote: &providers.Remote{URL: inf.ProvisionerURL, Fingerprint: fp, Token: token}}, nil
}

// checkProvisionerURL checks infrastructure.provisioner_url, read from
// the file where: https://HOST[:PORT], HOST an address literal that
// parses or a host name, never looked up here (hostport's rule).
func checkProvisionerURL(where, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%s: infrastructure.provisioner_url %q: %w: %w", where, raw, ErrInvalidProvisioner,
			&hostport.Error{Why: "not an https URL of node-provisioner daemon's API (no user, query or fragment)", Rule: hostport.URLRule})
	}
	if err := hostport.CheckURLHost(u.Host); err != nil {
		return fmt.Errorf("%s: infrastructure.provisioner_url %q: %w: %w", where, raw, ErrInvalidProvisioner, err)
	}
	return nil
}

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
	res.Plan = provisionPlan(SourceProvider, sum, in.Input, plat.Pools, existingNodes, o.DryRun)
	if ok, err := o.confirm(ctx, sum, in.Location.String(), nil, &res); !ok || err != nil {
		return res, err
	}
	if err := p.recordProvisioner(ctx, o.Platform, plat, in.Location); err != nil {
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
	res.Plan.Applied = res.Applied
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
			at, err := p.Provisioner(plat, explicit)
			if err == nil {
				st, err = d.States(ctx, at)
			}
			switch {
			case errors.Is(err, providers.ErrNoRecords):
				// Nothing says where the states are: say where they would
				// come from rather than call every node unregistered.
				p.log.Warn("install states unknown: set infrastructure.provisioner_url (node-provisioner's API) or provisioner_dir in platform.yaml, or give the provisioner's state folder",
					"platform", n.Platform, "err", err)
				st = nil
			case err != nil:
				// The nodes are still listed: the state is what is unknown
				// (a folder of another user, an API down).
				p.log.Warn("cannot read install states", "platform", n.Platform, "from", at.String(), "err", err)
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

// recordProvisioner writes the state folder at, when it is one, into
// the platform's infrastructure.provisioner_dir if the platform alone
// would name another, so that a later destroy or delete without an
// explicit folder finds the registrations this provision writes.
func (p *Project) recordProvisioner(ctx context.Context, platform string, plat *nodes.Platform, at providers.Location) error {
	if at.Remote != nil || at.Dir == "" {
		return nil
	}
	dir, err := filepath.Abs(at.Dir)
	if err != nil {
		return fmt.Errorf("record node-provisioner folder %s: %w", at.Dir, err)
	}
	if own := p.platformProvisionerDir(plat); own == dir || (own == "" && dir == DefaultProvisionerDir) {
		return nil
	}
	if plat.Infrastructure.ProvisionerURL != "" {
		// The platform names an API; the folder overrides it for this
		// run only.
		return nil
	}
	if rel, err := filepath.Rel(p.Store.Dir(), dir); err == nil && filepath.IsLocal(rel) {
		dir = rel
	}
	if _, err := p.Store.UpdatePlatform(ctx, platform, func(pl *nodes.Platform) error {
		pl.Infrastructure.ProvisionerDir = dir
		return nil
	}); err != nil {
		return fmt.Errorf("record node-provisioner folder in platform.yaml: %w", err)
	}
	plat.Infrastructure.ProvisionerDir = dir
	return nil
}

// platformProvisionerDir is the absolute folder the platform's own
// infrastructure.provisioner_dir names; empty when it names none.
func (p *Project) platformProvisionerDir(plat *nodes.Platform) string {
	d := plat.Infrastructure.ProvisionerDir
	if d == "" {
		return ""
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join(p.Store.Dir(), d)
	}
	if a, err := filepath.Abs(d); err == nil {
		d = a
	}
	return d
}

// reachable checks, before a withdraw changes anything, that the
// registrations of hosts can be read at in.Location: a folder that does
// not exist, an API that does not answer, or a location holding none of
// hosts' registrations (the platform provisioned elsewhere) is
// [ErrProvisionerUnreachable].
func reachable(ctx context.Context, platform string, d providers.Direct, at providers.Location, hosts []string) error {
	if len(hosts) == 0 {
		return nil
	}
	st, err := d.States(ctx, at)
	if err != nil {
		return fmt.Errorf("withdraw servers of platform %s: %w: cannot read the registrations at %s: %w", platform, ErrProvisionerUnreachable, at, err)
	}
	for _, h := range hosts {
		if st[h] != "" {
			return nil
		}
	}
	return fmt.Errorf("withdraw servers of platform %s: %w: none of its %d machines (%s) has a registration at %s; give the node-provisioner state folder or API they were provisioned with",
		platform, ErrProvisionerUnreachable, len(hosts), strings.Join(hosts, ", "), at)
}
