package pxe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/plasmactl/plasma-node/answer/registry"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/state"
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
// this host. Reading a folder without registrations creates nothing.
type LocalRegistry struct {
	// Dir is the state folder.
	Dir string
	// SecretsDir is node-provisioner's secrets folder, where BMC
	// passwords are kept. Empty: registry.DefaultSecretsDir.
	SecretsDir string
	// Logger receives what the store does; nil discards it.
	Logger *slog.Logger
}

var _ Registry = (*LocalRegistry)(nil)

// exists reports whether the folder has a registrations folder; a
// state folder that is not a folder is an error.
func (l *LocalRegistry) exists() (bool, error) {
	fi, err := os.Stat(l.Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !fi.IsDir():
		return false, fmt.Errorf("node-provisioner state folder %s: not a folder", l.Dir)
	}
	_, err = os.Stat(filepath.Join(l.Dir, "registrations"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Nodes returns registry.Status of the folder; none when it holds no
// registrations folder.
func (l *LocalRegistry) Nodes(ctx context.Context) ([]backend.Node, error) {
	if ok, err := l.exists(); !ok || err != nil {
		return nil, errors.Join(err, ctx.Err())
	}
	stores, err := l.open()
	if err != nil {
		return nil, err
	}
	return registry.Status(ctx, stores.Registrations(), l.Dir)
}

// Register writes r with [registry.Store.Register] (0600, in a 0700
// folder).
func (l *LocalRegistry) Register(ctx context.Context, r registry.Registration, opts registry.RegisterOptions) (registry.RegisterResult, error) {
	stores, err := l.open()
	if err != nil {
		return registry.RegisterResult{}, err
	}
	return stores.Registrations().Register(ctx, r, opts)
}

// RegisterWithBMCPassword writes the BMC password (0600, in the secrets
// folder), then the registration: a registration is never left with a
// BMC and no password.
func (l *LocalRegistry) RegisterWithBMCPassword(ctx context.Context, r registry.Registration, opts registry.RegisterOptions, password string) (registry.RegisterResult, error) {
	stores, err := l.open()
	if err != nil {
		return registry.RegisterResult{}, err
	}
	secrets, err := stores.Secrets()
	if err != nil {
		return registry.RegisterResult{}, err
	}
	if _, err := secrets.WriteBMCPassword(r.Name, password); err != nil {
		return registry.RegisterResult{}, err
	}
	return l.Register(ctx, r, opts)
}

// Unregister deletes the pending registration name.
func (l *LocalRegistry) Unregister(ctx context.Context, name string) error {
	if ok, err := l.exists(); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("unregister %s: %w", name, registry.ErrNotFound)
	}
	stores, err := l.open()
	if err != nil {
		return err
	}
	return stores.Registrations().Delete(ctx, name)
}

// open opens the folder's stores.
func (l *LocalRegistry) open() (*state.Stores, error) {
	return state.Open(l.Dir, state.Options{SecretsDir: l.SecretsDir, Logger: l.Logger})
}

// open returns the registry of a location: the API's when it names one
// (through the provider's dialer), else the folder's.
func (pv *Provider) open(ctx context.Context, at providers.Location, log *slog.Logger) (Registry, error) {
	if at.Remote != nil {
		dial := pv.Dial
		if dial == nil {
			dial = defaultDial
		}
		return dial(ctx, *at.Remote, log)
	}
	if at.Dir == "" {
		return nil, fmt.Errorf("provider pxe: %w: no node-provisioner state folder or API", providers.ErrInvalidInput)
	}
	return &LocalRegistry{Dir: at.Dir, SecretsDir: at.SecretsDir, Logger: log}, nil
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
	if at.Remote == nil {
		if _, err := os.Stat(at.Dir); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("node-provisioner state folder %s: %w", at.Dir, providers.ErrNoRecords)
		}
	}
	reg, err := pv.open(ctx, at, nil)
	if err != nil {
		return nil, err
	}
	ns, err := reg.Nodes(ctx)
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
