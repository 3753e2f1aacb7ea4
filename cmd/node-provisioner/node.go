package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// node is the node-provisioner a command acts on, one interface for
// both: --server's (or a local daemon's) API, remoteNode, or the state
// folder on this host, localNode. registrar.Open chooses ([app.node]).
// Its registrations, window state, events and tokens are
// registrar.Provisioner's, on this host registrar.Local's; what runs a
// server or a BMC driver is added here.
type node interface {
	registrar.Provisioner
	// Power runs a power action through name's BMC.
	Power(ctx context.Context, name, action string) (string, error)
	// Boot boots name into the installer through its BMC.
	Boot(ctx context.Context, name string) (api.BootReply, error)
	// Reinstall re-arms the installed name and boots it through its BMC.
	Reinstall(ctx context.Context, name string) (api.ReinstallReply, error)
	// Disable closes the window; closed says one was open.
	Disable(ctx context.Context) (closed bool, err error)
}

// node returns the node-provisioner of --server, else of the state
// folder, as registrar.Open chose.
func (a *app) node() (node, error) {
	r, err := a.registrar()
	if err != nil {
		return nil, err
	}
	switch r := r.(type) {
	case *client.Client:
		return remoteNode{r}, nil
	case *registrar.Local:
		return localNode{Local: r, a: a}, nil
	}
	return nil, fmt.Errorf("node-provisioner: no commands for a %T", r)
}

// remoteNode is a node-provisioner through its API.
type remoteNode struct{ *client.Client }

// Disable closes the window when it is open.
func (r remoteNode) Disable(ctx context.Context) (bool, error) {
	w, err := r.Window(ctx)
	if err != nil || !w.Open {
		return false, err
	}
	return true, r.CloseWindow(ctx)
}

// localNode is the state folder on this host.
type localNode struct {
	*registrar.Local
	a *app
}

// Power runs action through name's BMC; an unknown name is a usage
// error.
func (l localNode) Power(ctx context.Context, name, action string) (string, error) {
	req, err := l.a.bmcRequest(name)
	if err != nil {
		return "", err
	}
	p, err := power.Node(ctx, req, power.Action(action))
	if errors.Is(err, registry.ErrNotFound) {
		return "", usageError(err)
	}
	return string(p), err
}

// Boot boots name into the installer; an unknown name is a usage error.
func (l localNode) Boot(ctx context.Context, name string) (api.BootReply, error) {
	req, err := l.a.bmcRequest(name)
	if err != nil {
		return api.BootReply{}, err
	}
	res, err := power.Boot(ctx, req)
	if errors.Is(err, registry.ErrNotFound) {
		return api.BootReply{}, usageError(err)
	}
	if err != nil {
		return api.BootReply{}, err
	}
	return api.BootReply{Protocol: res.Protocol, Mode: string(res.Mode), Was: string(res.Was), Cycled: res.Cycled}, nil
}

// Disable closes the window of this host.
func (l localNode) Disable(ctx context.Context) (bool, error) {
	return pxe.Disable(ctx, l.Dir, 0)
}
