package registrar

import (
	"context"
	"errors"
	"fmt"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// Registrar is a node-provisioner's registrations as a program reaches
// them: [Local] on this host, a *client.Client through the API.
type Registrar interface {
	// Nodes lists every registration with its install state.
	Nodes(ctx context.Context) ([]backend.Node, error)
	// Register writes a registration, refusing a pin another pending
	// registration holds unless opts.Replace.
	Register(ctx context.Context, r registry.Registration, opts registry.RegisterOptions) (registry.RegisterResult, error)
	// RegisterWithBMCPassword is Register of r, whose BMC's password is
	// kept beside the node secrets once r is accepted.
	RegisterWithBMCPassword(ctx context.Context, r registry.Registration, opts registry.RegisterOptions, password string) (registry.RegisterResult, error)
	// Unregister removes a pending registration (and its BMC password);
	// none of that name wraps registry.ErrNotFound.
	Unregister(ctx context.Context, name string) error
}

// Inbox is what lists the discovery inbox: [*Local] and the API's
// client.
type Inbox interface {
	// Discovered returns the inbox's live entries, oldest first.
	Discovered(ctx context.Context) ([]discovery.Record, error)
}

// ErrInvalidPassword is wrapped by [Register]'s error for a BMC password
// that is empty or spans lines, or one given without a BMC.
var ErrInvalidPassword = errors.New("invalid BMC password")

// Register registers r in regs and then, when r has a BMC, keeps its
// password in secrets: only a registration that was accepted has its
// password written. Once r is written, the BMC passwords it left behind
// are removed by [Forget]: the replaced registration's, when r has no
// BMC, and those of the registrations it took pins from. Should the password not be written, the
// registration is undone (the previous one of the name restored, or r
// removed), so that no registration is left with a BMC and no password.
// A BMC needs a password, and a password a BMC ([ErrInvalidPassword]);
// a BMC that names a site secret (registry.BMC.Secret) takes none;
// no error includes the password.
func Register(ctx context.Context, regs registry.Registrations, secrets secret.Store, r registry.Registration, opts registry.RegisterOptions, password string) (registry.RegisterResult, error) {
	own := r.BMC != nil && r.BMC.Secret == "" // the BMC's password is the node's own
	switch {
	case r.BMC != nil && r.BMC.Secret != "" && password != "":
		return registry.RegisterResult{}, fmt.Errorf("register %s: %w: the BMC's password is site secret %s; give none of its own", r.Name, ErrInvalidPassword, r.BMC.Secret)
	case r.BMC == nil && password != "":
		return registry.RegisterResult{}, fmt.Errorf("register %s: %w: a password without a BMC", r.Name, ErrInvalidPassword)
	case own && (password == "" || strings.ContainsAny(password, "\r\n")):
		return registry.RegisterResult{}, fmt.Errorf("register %s: %w: a BMC needs its password, on one line", r.Name, ErrInvalidPassword)
	case own && secrets == nil:
		return registry.RegisterResult{}, fmt.Errorf("register %s: %w: nowhere to keep the BMC password", r.Name, ErrInvalidPassword)
	}
	res, err := regs.Register(ctx, r, opts)
	if err != nil {
		return res, err
	}
	if !own {
		return res, forget(ctx, regs, secrets, stale(r.Name, res))
	}
	if _, err := secrets.WriteBMCPassword(ctx, r.Name, password); err != nil {
		undo := context.WithoutCancel(ctx)
		var uerr error
		if res.Previous != nil && res.Previous.Created.IsZero() {
			uerr = regs.Delete(undo, r.Name) // the previous one was unreadable
		} else if res.Previous != nil {
			_, uerr = regs.Register(undo, *res.Previous, registry.RegisterOptions{})
		} else {
			uerr = regs.Delete(undo, r.Name)
		}
		return registry.RegisterResult{}, errors.Join(fmt.Errorf("keep the BMC password of %s: %w", r.Name, err), uerr)
	}
	return res, forget(ctx, regs, secrets, stale(r.Name, res))
}

// stale returns the registrations whose BMC password the registration
// of name may have left without its BMC: the one it replaced, when that
// had a BMC, and those it took pins from (removed when left pinning
// nothing).
func stale(name string, res registry.RegisterResult) []string {
	var out []string
	if p := res.Previous; p != nil && p.BMC != nil {
		out = append(out, name)
	}
	for _, m := range res.Moved {
		if !slices.Contains(out, m.From) {
			out = append(out, m.From)
		}
	}
	return out
}

// forget runs [Forget] for each of names; a nil secrets keeps none.
func forget(ctx context.Context, regs registry.Registrations, secrets secret.Store, names []string) error {
	if secrets == nil {
		return nil
	}
	var errs []error
	for _, n := range names {
		if err := Forget(ctx, regs, secrets, n); err != nil {
			errs = append(errs, fmt.Errorf("remove the BMC password of %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}

// Unregister deletes the pending registration name from regs, then its
// BMC password from secrets unless a consumed registration of the name
// still names a BMC (its machine's power is still driven).
func Unregister(ctx context.Context, regs registry.Registrations, secrets secret.Store, name string) error {
	if err := regs.Delete(ctx, name); err != nil {
		return err
	}
	return Forget(ctx, regs, secrets, name)
}

// Forget removes name's BMC password from secrets when no registration
// of the name, pending or consumed, names a BMC.
func Forget(ctx context.Context, regs registry.Registrations, secrets secret.Store, name string) error {
	if secrets == nil {
		return nil
	}
	if r, err := regs.Get(ctx, name); err == nil && r.BMC != nil {
		return nil
	} else if err != nil && !errors.Is(err, registry.ErrNotFound) {
		return err
	}
	consumed, err := regs.Consumed(ctx)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(consumed, func(c registry.Registration) bool { return c.Name == name && c.BMC != nil }) {
		return nil
	}
	return secrets.RemoveBMCPassword(ctx, name)
}

// Local is the [Registrar] of a node-provisioner state folder on this
// host. Reading a folder without registrations creates nothing. It opens
// the folder's stores once, on first need, and keeps them ([Local.Stores]).
type Local struct {
	// Dir is the state folder.
	Dir string
	// SecretsDir is node-provisioner's secrets folder, where BMC
	// passwords are kept. Empty: secret.DefaultDir.
	SecretsDir string
	// Store and KeyFile are pxe/store's [store.Options] Store and
	// KeyFile: a postgres:// URL keeps the registrations, secrets,
	// tokens and events there, beside the folder.
	Store, KeyFile string
	// Openers are the store URLs' openers (pxe/store's Options.Openers):
	// a Store needs its scheme's.
	Openers store.Openers
	// Logger receives what the store does; nil discards it.
	Logger *slog.Logger

	mu     sync.Mutex
	stores *store.Stores
	events events.Store // a reader's, before stores are open
}

var _ Registrar = (*Local)(nil)

// Exists reports whether the state folder holds registrations
// ([store.Exists]); it creates nothing. A PostgreSQL store exists.
func (l *Local) Exists() (bool, error) {
	if l.Store != "" {
		return true, nil
	}
	return store.Exists(l.Dir)
}

// Stores returns the state folder's stores ([store.Open]), opened on the
// first call and the same ones after: the process's one writer of each.
func (l *Local) Stores(ctx context.Context) (*store.Stores, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stores != nil {
		return l.stores, nil
	}
	s, err := store.Open(ctx, l.Dir, store.Options{SecretsDir: l.SecretsDir, Store: l.Store, KeyFile: l.KeyFile, Openers: l.Openers, Logger: l.Logger})
	if err != nil {
		return nil, err
	}
	l.stores = s
	return s, nil
}

// Nodes returns regbackend.Status of the folder; none when it holds no
// registrations folder.
func (l *Local) Nodes(ctx context.Context) ([]backend.Node, error) {
	if ok, err := l.Exists(); !ok || err != nil {
		return nil, errors.Join(err, ctx.Err())
	}
	stores, err := l.Stores(ctx)
	if err != nil {
		return nil, err
	}
	ins, err := stores.Installs()
	if err != nil {
		return nil, err
	}
	return regbackend.Status(ctx, stores.Registrations(), stores.Events(), ins)
}

// Discovered returns the state folder's discovery inbox; none when the
// folder holds no registrations folder (nothing is created).
func (l *Local) Discovered(ctx context.Context) ([]discovery.Record, error) {
	if ok, err := l.Exists(); !ok || err != nil {
		return nil, errors.Join(err, ctx.Err())
	}
	stores, err := l.Stores(ctx)
	if err != nil {
		return nil, err
	}
	in, err := stores.Discovered()
	if err != nil {
		return nil, err
	}
	return in.List(ctx, time.Now())
}

// Register writes r (0600, in a 0700 folder); r must not have a BMC,
// whose password [Local.RegisterWithBMCPassword] keeps.
func (l *Local) Register(ctx context.Context, r registry.Registration, opts registry.RegisterOptions) (registry.RegisterResult, error) {
	return l.RegisterWithBMCPassword(ctx, r, opts, "")
}

// RegisterWithBMCPassword writes r, then its BMC password (0600, in the
// secrets folder), by [Register].
func (l *Local) RegisterWithBMCPassword(ctx context.Context, r registry.Registration, opts registry.RegisterOptions, password string) (registry.RegisterResult, error) {
	site, err := l.site()
	if err != nil {
		return registry.RegisterResult{}, err
	}
	// The site's boot method applies to a registration naming none.
	if err := registry.CheckBootMethod(r, site); err != nil {
		return registry.RegisterResult{}, err
	}
	stores, err := l.Stores(ctx)
	if err != nil {
		return registry.RegisterResult{}, err
	}
	var secrets secret.Store
	if r.BMC != nil {
		if secrets, err = stores.Secrets(ctx); err != nil {
			return registry.RegisterResult{}, err
		}
	}
	res, err := Register(ctx, stores.Registrations(), secrets, r, opts, password)
	if names := stale(r.Name, res); err == nil && secrets == nil && len(names) > 0 {
		// Without a BMC of its own, r opened no secrets folder: one is
		// opened only when a password may have been left behind.
		if secrets, err = stores.Secrets(ctx); err == nil {
			err = forget(ctx, stores.Registrations(), secrets, names)
		}
	}
	return res, err
}

// Unregister deletes the pending registration name and, by
// [Unregister], its BMC password.
func (l *Local) Unregister(ctx context.Context, name string) error {
	if ok, err := l.Exists(); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("unregister %s: %w", name, registry.ErrNotFound)
	}
	stores, err := l.Stores(ctx)
	if err != nil {
		return err
	}
	secrets, err := stores.Secrets(ctx)
	if err != nil {
		return err
	}
	return Unregister(ctx, stores.Registrations(), secrets, name)
}
