package daemon

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Local is the [registrar.Operator] of a state folder on this host: its
// registrations, events and tokens are [registrar.Local]'s; power, boot
// and reinstall drive the machines' BMCs (package power) over the
// folder's stores, and Disable stops the folder's window (pxe.Disable).
// A folder that holds no registrations is not created to look for a
// machine in it: its names are not found (registry.ErrNotFound).
type Local struct{ *registrar.Local }

var _ registrar.Operator = Local{}

// OperatorOf returns the operator of r, as registrar.Open chose it: a
// *client.Client's is [registrar.Remote], a *registrar.Local's [Local].
func OperatorOf(r registrar.Registrar) (registrar.Operator, error) {
	switch r := r.(type) {
	case *client.Client:
		return registrar.Remote{Client: r}, nil
	case *registrar.Local:
		return Local{Local: r}, nil
	}
	return nil, fmt.Errorf("no operator for a %T", r)
}

// request returns power's request for name over the folder's stores,
// refusing a name of a folder without registrations as not found.
func (l Local) request(ctx context.Context, name string) (*bmcs, error) {
	nodes, err := l.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%w named %q", registry.ErrNotFound, name)
	}
	stores, err := l.Stores(ctx)
	if err != nil {
		return nil, err
	}
	return newBMCs(stores, stores.Events(), l.logger()), nil
}

func (l Local) logger() *slog.Logger {
	if l.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Logger
}

// Power runs action through name's BMC ([power.Node]).
func (l Local) Power(ctx context.Context, name, action string) (string, error) {
	b, err := l.request(ctx, name)
	if err != nil {
		return "", err
	}
	return b.Power(ctx, name, action)
}

// Boot boots name into the installer through its BMC ([power.Boot]).
func (l Local) Boot(ctx context.Context, name string) (apitype.BootReply, error) {
	b, err := l.request(ctx, name)
	if err != nil {
		return apitype.BootReply{}, err
	}
	return b.Boot(ctx, name)
}

// Reinstall re-arms the installed name, keeping its data pools unless
// ro.WipeData, and, with a BMC, boots it ([power.Reinstall]: refused
// while the window is closed).
func (l Local) Reinstall(ctx context.Context, name string, ro apitype.ReinstallRequest) (apitype.ReinstallReply, error) {
	stores, err := l.Stores(ctx)
	if err != nil {
		return apitype.ReinstallReply{}, err
	}
	b := newBMCs(stores, stores.Events(), l.logger())
	req, err := b.req(ctx, name)
	if err != nil {
		return apitype.ReinstallReply{}, err
	}
	boot, err := power.Reinstall(ctx, req, ro.WipeData)
	reply := apitype.ReinstallReply{Name: name}
	if err == nil && boot != nil {
		b := bootReply(*boot)
		reply.Boot = &b
	}
	return reply, err
}

// Disable closes the folder's window ([pxe.Disable]).
func (l Local) Disable(ctx context.Context) (bool, error) {
	return pxe.Disable(ctx, l.Dir, 0)
}

// TokenNeededError is [Via]'s error when a daemon runs on the state
// folder and no API token was given: the daemon owns the folder's
// window, so a second one is never served beside it.
type TokenNeededError struct {
	// Dir is the state folder.
	Dir string
	// Daemon is the running daemon's record.
	Daemon Record
}

// Error names the daemon.
func (e *TokenNeededError) Error() string {
	return fmt.Sprintf("a node-provisioner daemon runs on state folder %s (pid %d, API %s): this goes through its API and needs a token", e.Dir, e.Daemon.PID, e.Daemon.URL())
}

// ErrNoToken is wrapped by a [*TokenNeededError].
func (e *TokenNeededError) Unwrap() error { return registrar.ErrNoToken }

// Via returns who a command on op acts through: op, or, when op is the
// [Local] of a state folder a daemon runs on, that daemon through its
// API on this host ([LocalClient]) with token, and the daemon's record
// (nil when none runs). Without a token op is kept, unless need: then it
// is a [*TokenNeededError].
func Via(op registrar.Operator, token string, need bool, log *slog.Logger) (registrar.Operator, *Record, error) {
	l, ok := op.(Local)
	if !ok {
		return op, nil, nil
	}
	r, running, err := Running(l.Dir)
	switch {
	case err != nil || !running:
		return op, nil, err
	case token == "" && need:
		return op, &r, &TokenNeededError{Dir: l.Dir, Daemon: r}
	case token == "":
		return op, &r, nil
	}
	c, err := LocalClient(l.Dir, r, token, log)
	if err != nil {
		return op, &r, err
	}
	return registrar.Remote{Client: c}, &r, nil
}
