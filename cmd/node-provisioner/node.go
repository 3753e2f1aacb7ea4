package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/plasmactl/plasma-node/answer/registry"
	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/registrar"
)

// node is the node-provisioner a command acts on, one interface for
// both: --server's (or a local daemon's) API, remoteNode, or the state
// folder on this host, localNode. registrar.Open chooses ([app.node]).
type node interface {
	registrar.Registrar
	// Power runs a power action through name's BMC.
	Power(ctx context.Context, name, action string) (string, error)
	// Boot boots name into the installer through its BMC.
	Boot(ctx context.Context, name string) (api.BootReply, error)
	// Reinstall re-arms the installed name and boots it through its BMC.
	Reinstall(ctx context.Context, name string) (api.ReinstallReply, error)
	// Window returns the provisioning window's state.
	Window(ctx context.Context) (api.WindowStatus, error)
	// Disable closes the window; closed says one was open.
	Disable(ctx context.Context) (closed bool, err error)
	// Events calls fn with each event after lastID until ctx ends.
	Events(ctx context.Context, lastID string, fn func(id string, e backend.Event) error) error
	// Tokens lists the API tokens.
	Tokens(ctx context.Context) ([]client.TokenInfo, error)
	// CreateToken makes an API token, returned once.
	CreateToken(ctx context.Context, name, scope string, ttl time.Duration) (string, error)
	// RevokeToken revokes an API token.
	RevokeToken(ctx context.Context, name string) error
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

// Window returns the state folder's window.
func (l localNode) Window(context.Context) (api.WindowStatus, error) {
	return api.WindowStatusOf(l.Dir, time.Now())
}

// Disable closes the window of this host.
func (l localNode) Disable(ctx context.Context) (bool, error) {
	return pxe.Disable(ctx, l.Dir, 0)
}

// Events follows the state folder's events; a folder without
// registrations is not created.
func (l localNode) Events(ctx context.Context, lastID string, fn func(id string, e backend.Event) error) error {
	evs, err := l.Local.Events()
	if err != nil {
		return err
	}
	return evs.Follow(ctx, lastID, func(r events.Record) error { return fn(r.ID, r.Event) })
}

// Tokens lists the state folder's tokens; a read makes nothing: without
// the tokens' folder there are none.
func (l localNode) Tokens(ctx context.Context) ([]client.TokenInfo, error) {
	out := []client.TokenInfo{}
	if _, err := os.Lstat(filepath.Join(l.Dir, apitoken.DirName)); errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	st, err := l.tokens()
	if err != nil {
		return nil, err
	}
	toks, err := st.List(ctx)
	for _, t := range toks {
		out = append(out, client.TokenInfo{Name: t.Name, Scope: string(t.Scope), Created: t.Created, LastUsed: t.LastUsed, Expires: t.Expires})
	}
	return out, err
}

// tokens returns the process's token store of the state folder.
func (l localNode) tokens() (apitoken.Tokens, error) {
	stores, err := l.Stores()
	if err != nil {
		return nil, err
	}
	return stores.Tokens()
}

// CreateToken makes a token in the state folder; ttl 0 never expires.
func (l localNode) CreateToken(ctx context.Context, name, scope string, ttl time.Duration) (string, error) {
	st, err := l.tokens()
	if err != nil {
		return "", err
	}
	var expires time.Time
	if ttl > 0 {
		expires = time.Now().Add(ttl).Truncate(time.Second)
	}
	return st.Create(ctx, name, apitoken.Scope(scope), expires)
}

// RevokeToken revokes a token of the state folder.
func (l localNode) RevokeToken(ctx context.Context, name string) error {
	st, err := l.tokens()
	if err != nil {
		return err
	}
	return st.Revoke(ctx, name)
}
