package pxe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Registry is where a pxe platform's registrations are kept: a
// node-provisioner state folder on this host ([LocalRegistry]) or
// node-provisioner's management API (a *client.Client of package
// pxe/client satisfies it).
type Registry interface {
	// Nodes lists every registration with its install state.
	Nodes(ctx context.Context) ([]backend.Node, error)
	// Register writes a registration, refusing a pin another pending
	// registration holds unless opts.Replace.
	Register(ctx context.Context, r registry.Registration, opts registry.RegisterOptions) (registry.RegisterResult, error)
	// Unregister removes a pending registration; none of that name
	// wraps registry.ErrNotFound.
	Unregister(ctx context.Context, name string) error
}

// Dialer opens the [Registry] of a remote location.
type Dialer func(ctx context.Context, r providers.Remote, log *slog.Logger) (Registry, error)

// BMCRegistry is a [Registry] that also keeps the BMC password of a
// registration with a BMC (never in the registration itself).
type BMCRegistry interface {
	Registry
	// RegisterWithBMCPassword is Register of r, whose BMC's password is
	// kept beside the node secrets.
	RegisterWithBMCPassword(ctx context.Context, r registry.Registration, opts registry.RegisterOptions, password string) (registry.RegisterResult, error)
}

// registerWithBMC registers r and its BMC password, where reg can.
func registerWithBMC(ctx context.Context, reg Registry, r registry.Registration, pw string) (registry.RegisterResult, error) {
	b, ok := reg.(BMCRegistry)
	if !ok {
		return registry.RegisterResult{}, fmt.Errorf("%w: this registry cannot keep a BMC password", ErrInvalidHardware)
	}
	return b.RegisterWithBMCPassword(ctx, r, registry.RegisterOptions{}, pw)
}

// LocalRegistry is the [Registry] of a node-provisioner state folder on
// this host: [registrar.Local], which keeps a BMC password once its
// registration is accepted and removes it with the registration.
type LocalRegistry = registrar.Local

// open returns the registry of a location: the API's when it names one
// (through the provider's dialer, when it has one), else the folder's;
// registrar.Open chooses.
func (pv *Provider) open(ctx context.Context, at providers.Location, log *slog.Logger) (Registry, error) {
	if at.Remote != nil && pv.Dial != nil {
		return pv.Dial(ctx, *at.Remote, log)
	}
	if at.Remote == nil && at.Dir == "" {
		return nil, fmt.Errorf("provider pxe: %w: %w", providers.ErrInvalidInput, registrar.ErrNowhere)
	}
	w := registrar.Where{Dir: at.Dir, SecretsDir: at.SecretsDir, Logger: log}
	if at.Remote != nil {
		w = registrar.Where{Server: at.Remote.URL, Token: at.Remote.Token, Fingerprint: at.Remote.Fingerprint, Logger: log}
	}
	return registrar.Open(w)
}

// registrations returns the registrations of a location by name
// (pending wins over consumed), as far as the plan needs them: pins and
// whether consumed. A broken pending registration is an error naming
// its problem.
func registrations(ctx context.Context, reg Registry) (map[string]registry.Registration, error) {
	ns, err := reg.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]registry.Registration{}
	for _, n := range ns {
		if _, dup := out[n.Name]; dup && n.State != backend.StatePending {
			continue
		}
		if n.State == backend.StateBroken {
			return nil, fmt.Errorf("registration %s: %w: %s", n.Name, ErrInvalidHardware, n.Problem)
		}
		r := registry.Registration{Name: n.Name, MACs: n.MACs, Serial: n.Serial, UUID: n.UUID, Created: n.Created}
		if n.StaticAddress != "" {
			r.Network = &registry.Network{CIDR: n.StaticAddress}
		}
		if n.State != backend.StatePending {
			r.Consumed = &registry.ConsumeRecord{}
			if n.ConsumedAt != nil {
				r.Consumed.Time = *n.ConsumedAt
			}
		}
		out[n.Name] = r
	}
	return out, nil
}

// States returns the state of each registration at a location by name:
// pending, consumed, undelivered, installed or broken (a pending one
// wins over an earlier install of the same name).
//
// Errors: [providers.ErrNoRecords] for a folder that does not exist.
func (pv *Provider) States(ctx context.Context, at providers.Location) (map[string]string, error) {
	ns, err := pv.nodes(ctx, at)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, s := range ns {
		if _, dup := out[s.Name]; !dup || s.State == backend.StatePending {
			out[s.Name] = s.State
		}
	}
	return out, nil
}

// nodes lists node-provisioner's registrations at a location.
func (pv *Provider) nodes(ctx context.Context, at providers.Location) ([]backend.Node, error) {
	if at.Remote == nil {
		if _, err := os.Stat(at.Dir); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("node-provisioner state folder %s: %w", at.Dir, providers.ErrNoRecords)
		}
	}
	reg, err := pv.open(ctx, at, nil)
	if err != nil {
		return nil, err
	}
	return reg.Nodes(ctx)
}

// Installed returns what the installer of each installed registration at
// a location reported (its webhook): the FQDN, the management address,
// the SSH host keys, the pinned NIC names and the boot disks' devices, by
// hostname.
func (pv *Provider) Installed(ctx context.Context, at providers.Location) (map[string]providers.Installed, error) {
	ns, err := pv.nodes(ctx, at)
	if err != nil {
		return nil, err
	}
	out := map[string]providers.Installed{}
	for _, n := range ns {
		if n.State != backend.StateInstalled || n.Install == nil {
			continue
		}
		in := providers.Installed{FQDN: n.Install.FQDN, HostKeys: n.Install.HostKeys, NICNames: n.Install.NICNames}
		if m := n.Install.Management; m != nil {
			in.Address = m.Address
		}
		for _, d := range n.Install.BootDisks {
			if d.Name != "" {
				in.BootDisks = append(in.BootDisks, d.Name)
			}
		}
		out[n.Name] = in
	}
	return out, nil
}
