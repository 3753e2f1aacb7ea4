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

// siteIn returns given merged with the state folder's site settings
// file ([registry.SiteFileName]; none when it is missing).
func siteIn(stateDir string, given registry.Site) (registry.Site, error) {
	file, err := registry.LoadSiteIfExists(filepath.Join(stateDir, registry.SiteFileName))
	return given.Merge(file), err
}

// CheckSite returns the site settings a window on stateDir answers
// with, given merged with the folder's file, refusing them when they
// cannot be read or the installer would refuse them in every answer: a
// [*backend.ConfigError] naming "Site". [Open] checks them; a program
// that opens windows later (the daemon) checks them at its start.
func CheckSite(stateDir string, given registry.Site) (registry.Site, error) {
	site, err := siteIn(stateDir, given)
	if err != nil {
		return site, &backend.ConfigError{Field: "Site", Reason: "cannot be read", Err: err}
	}
	if err := site.Check(); err != nil {
		path := filepath.Join(stateDir, registry.SiteFileName)
		return site, &backend.ConfigError{Field: "Site", Reason: "every answer would fail on them (flags and " + path + ")", Err: err}
	}
	return site, nil
}

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
	probe, err := CheckSite(o.StateDir, o.Site)
	if err != nil {
		return nil, err
	}
	site := func() (registry.Site, error) { return siteIn(o.StateDir, o.Site) }
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
