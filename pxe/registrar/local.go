package registrar

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// Provisioner is a node-provisioner as a program manages it, on this
// host ([Local]) or through its API (a *client.Client), in one way:
// its registrations, its window's state, its events and its API tokens.
// Acting on the window or on a machine's BMC runs a server or a BMC
// driver, which this package links neither of.
type Provisioner interface {
	Registrar
	// Window returns the provisioning window's state.
	Window(ctx context.Context) (apitype.WindowStatus, error)
	// Events calls fn with each event after lastID ("" the oldest kept,
	// events.FromNow none), then with each one appended later, until ctx
	// ends or fn fails.
	Events(ctx context.Context, lastID string, fn func(id string, e backend.Event) error) error
	// Tokens lists the API tokens.
	Tokens(ctx context.Context) ([]apitype.TokenInfo, error)
	// CreateToken makes an API token, returned once; ttl 0 never
	// expires.
	CreateToken(ctx context.Context, name, scope string, ttl time.Duration) (string, error)
	// RevokeToken revokes an API token.
	RevokeToken(ctx context.Context, name string) error
}

var (
	_ Provisioner = (*Local)(nil)
	_ Provisioner = (*client.Client)(nil)
)

// WindowStatus returns the window st holds as the API shows it, whoever
// runs it: its record while open, else the holder of its lock (a window
// starting), else closed.
func WindowStatus(ctx context.Context, st window.Store, now time.Time) (apitype.WindowStatus, error) {
	w, err := st.Read(ctx)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return apitype.WindowStatus{}, err
	}
	if err == nil && w.Open(now) {
		return apitype.WindowStatus{Open: true, PID: w.PID, Unit: w.Unit, Started: w.Started, Deadline: w.Deadline, HTTP: w.HTTP, URL: w.URL,
			DHCPInterface: w.DHCPInterface, TFTP: w.TFTP, CertFingerprint: w.CertFingerprint, SecureBoot: w.SecureBoot, Discover: w.Discover}, nil
	}
	held, err := st.Holder(ctx)
	if err != nil {
		return apitype.WindowStatus{}, err
	}
	if held != nil {
		return apitype.WindowStatus{Open: true, PID: held.PID, HTTP: held.HTTP, Started: held.Since}, nil
	}
	return apitype.WindowStatus{}, nil
}

// Window returns the state folder's window ([WindowStatus]); it creates
// nothing.
func (l *Local) Window(ctx context.Context) (apitype.WindowStatus, error) {
	return WindowStatus(ctx, store.Window(l.Dir), time.Now())
}

// EventStore returns the folder's event store: that of its stores once
// they are open ([Local.Stores]), else one that only reads and creates
// nothing ([store.Events]), so that following the events of a folder
// without registrations does not make it.
func (l *Local) EventStore(ctx context.Context) (events.Store, error) {
	if l.Store != "" {
		stores, err := l.Stores(ctx)
		if err != nil {
			return nil, err
		}
		return stores.Events(), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stores != nil {
		return l.stores.Events(), nil
	}
	if l.events == nil {
		evs, err := store.Events(l.Dir)
		if err != nil {
			return nil, err
		}
		l.events = evs
	}
	return l.events, nil
}

// Events follows the folder's events ([Local.EventStore]); it creates
// nothing.
func (l *Local) Events(ctx context.Context, lastID string, fn func(id string, e backend.Event) error) error {
	evs, err := l.EventStore(ctx)
	if err != nil {
		return err
	}
	return evs.Follow(ctx, lastID, func(r events.Record) error { return fn(r.ID, r.Event) })
}

// Tokens lists the folder's API tokens; a read makes nothing: without
// the tokens' folder there are none.
func (l *Local) Tokens(ctx context.Context) ([]apitype.TokenInfo, error) {
	out := []apitype.TokenInfo{}
	if _, err := os.Lstat(filepath.Join(l.Dir, apitoken.DirName)); errors.Is(err, fs.ErrNotExist) && l.Store == "" {
		return out, nil
	}
	st, err := l.tokens(ctx)
	if err != nil {
		return nil, err
	}
	toks, err := st.List(ctx)
	for _, t := range toks {
		out = append(out, apitype.TokenInfo{Name: t.Name, Scope: string(t.Scope), Created: t.Created, LastUsed: t.LastUsed, Expires: t.Expires})
	}
	return out, err
}

// CreateToken makes an API token in the folder, returned once; ttl 0
// never expires.
func (l *Local) CreateToken(ctx context.Context, name, scope string, ttl time.Duration) (string, error) {
	st, err := l.tokens(ctx)
	if err != nil {
		return "", err
	}
	var expires time.Time
	if ttl > 0 {
		expires = time.Now().Add(ttl).Truncate(time.Second)
	}
	return st.Create(ctx, name, apitoken.Scope(scope), expires)
}

// RevokeToken revokes an API token of the folder.
func (l *Local) RevokeToken(ctx context.Context, name string) error {
	st, err := l.tokens(ctx)
	if err != nil {
		return err
	}
	return st.Revoke(ctx, name)
}

// tokens returns the token store of the folder's stores.
func (l *Local) tokens(ctx context.Context) (apitoken.Tokens, error) {
	stores, err := l.Stores(ctx)
	if err != nil {
		return nil, err
	}
	return stores.Tokens()
}
