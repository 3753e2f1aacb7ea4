package regbackend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// Stores are the stores of a state, as [Open] takes them; *store.Stores
// (package pxe/store) is one, and an embedder's may be another.
type Stores interface {
	// Registrations returns the registrations.
	Registrations() registry.Registrations
	// Secrets returns the nodes' secrets.
	Secrets(ctx context.Context) (secret.Store, error)
	// Events returns the event store, the same one each time.
	Events() events.Store
	// Installs returns the installers' reports.
	Installs() (registry.Installs, error)
	// Recover is the stores' part in a window's start ([Config].Recover).
	Recover(ctx context.Context) error
}

// Options tune [Open].
type Options struct {
	// StateDir is the state folder: its first-boot/ keeps the answered
	// nodes' one-shot files and its site.json the site's settings, read
	// again for every answer. Required.
	StateDir string
	// Site are settings for every answer over those of site.json.
	Site registry.Site
	// Discover is set for a discovery window, which boots every
	// machine no registration knows: Open refuses while a pending
	// registration pins no machine ([ErrUnpinnedPending]).
	Discover bool
	// Logger receives the backend's log; nil discards it.
	Logger *slog.Logger
}

// ErrUnpinnedPending is wrapped by [Open]'s error for a discovery window
// while a pending registration pins no machine: any stranger would match
// it (the single-unpinned rule). The error names the registrations.
var ErrUnpinnedPending = errors.New("a pending registration pins no machine")

// Open builds the backend a window answers from over stores, refusing
// what every answer would fail on: site settings (flags and site.json)
// the installer would refuse, pending registrations their answers would
// fail for, and a discovery window with an unpinned registration pending.
// A refusal is a [*backend.ConfigError] naming "Site", "Registrations"
// or "Discover". The window calls the backend's Start when it opens;
// the caller closes it.
func Open(ctx context.Context, stores Stores, o Options) (*Backend, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	store := stores.Registrations()
	sec, err := stores.Secrets(ctx)
	if err != nil {
		return nil, err
	}
	sitePath := filepath.Join(o.StateDir, registry.SiteFileName)
	site := func() (registry.Site, error) {
		file, err := registry.LoadSiteIfExists(sitePath)
		return o.Site.Merge(file), err
	}
	probe, err := site()
	if err != nil {
		return nil, &backend.ConfigError{Field: "Site", Reason: "cannot be read", Err: err}
	}
	if err := probe.Check(); err != nil {
		return nil, &backend.ConfigError{Field: "Site", Reason: "every answer would fail on them (flags and " + sitePath + ")", Err: err}
	}
	installs, err := stores.Installs()
	if err != nil {
		return nil, err
	}
	b, err := New(Config{Store: store, Secrets: sec, StateDir: o.StateDir, Events: stores.Events(), Installs: installs, Site: site, Logger: log, Recover: stores.Recover})
	if err != nil {
		return nil, err
	}
	if o.Discover {
		if err := checkDiscover(ctx, store); err != nil {
			return nil, err
		}
	}
	pending, err := registry.Pending(ctx, store)
	if err == nil && len(pending) == 0 && !o.Discover {
		log.Warn("no pending registrations: every request will be refused; add one with node-provisioner register")
	}
	var bad []error
	for _, r := range pending {
		if err := probe.CheckRegistration(r); err != nil {
			bad = append(bad, fmt.Errorf("registration %s: %w", r.Name, err))
		}
	}
	if len(bad) > 0 {
		return nil, &backend.ConfigError{Field: "Registrations", Reason: "the installer would refuse their answers (fix or unregister them)", Err: errors.Join(bad...)}
	}
	return b, nil
}

// UnpinnedPending returns the names of the pending registrations of
// regs that pin no machine (no MAC, serial or UUID).
func UnpinnedPending(ctx context.Context, regs registry.Registrations) ([]string, error) {
	pending, err := registry.Pending(ctx, regs)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range pending {
		if len(r.Pins()) == 0 {
			out = append(out, r.Name)
		}
	}
	return out, nil
}

// checkDiscover refuses a discovery window while an unpinned
// registration is pending.
func checkDiscover(ctx context.Context, regs registry.Registrations) error {
	names, err := UnpinnedPending(ctx, regs)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		return &backend.ConfigError{Field: "Discover", Value: strings.Join(names, ", "),
			Reason: "a discovery window boots every unregistered machine, and one would meet the only-pending rule: pin or unregister it first",
			Err:    fmt.Errorf("%w: %s", ErrUnpinnedPending, strings.Join(names, ", "))}
	}
	return nil
}
