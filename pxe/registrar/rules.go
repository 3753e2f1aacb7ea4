package registrar

import (
	"context"
	"path/filepath"
	"time"

	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Rules manages the enrolment rules, on this host ([*Local]) or through
// the API (a *client.Client, admin), in one way.
type Rules interface {
	// Rules returns the rules by priority and their counters.
	Rules(ctx context.Context) (enrol.State, error)
	// AddRule checks r and adds it, or replaces the rule of its name
	// with replace ([enrol.Add]).
	AddRule(ctx context.Context, r enrol.Rule, replace bool) (enrol.State, error)
	// ApplyRules makes rules the whole set ([enrol.Apply]).
	ApplyRules(ctx context.Context, rules []enrol.Rule) (enrol.State, error)
	// RemoveRule removes the rule name ([enrol.ErrNotFound]).
	RemoveRule(ctx context.Context, name string) error
	// PreviewRules says what the rules would make of each machine of
	// the inbox ([enrol.PreviewInbox]).
	PreviewRules(ctx context.Context) ([]enrol.Decision, error)
}

var (
	_ Rules = (*Local)(nil)
	_ Rules = (*client.Client)(nil)
)

// site returns the settings rules are checked with: the folder's
// site.json.
func (l *Local) site() (registry.Site, error) {
	return registry.LoadSiteIfExists(filepath.Join(l.Dir, registry.SiteFileName))
}

// Rules returns the stores' rules.
func (l *Local) Rules(ctx context.Context) (enrol.State, error) {
	stores, err := l.Stores(ctx)
	if err != nil {
		return enrol.State{}, err
	}
	st, err := stores.Rules().Read(ctx)
	st.Held = nil
	return st, err
}

// AddRule checks r with the folder's site settings and adds it.
func (l *Local) AddRule(ctx context.Context, r enrol.Rule, replace bool) (enrol.State, error) {
	stores, err := l.Stores(ctx)
	if err != nil {
		return enrol.State{}, err
	}
	site, err := l.site()
	if err != nil {
		return enrol.State{}, err
	}
	return enrol.Add(ctx, stores.Rules(), site, r, replace)
}

// ApplyRules checks rules with the folder's site settings and makes
// them the whole set.
func (l *Local) ApplyRules(ctx context.Context, rules []enrol.Rule) (enrol.State, error) {
	stores, err := l.Stores(ctx)
	if err != nil {
		return enrol.State{}, err
	}
	site, err := l.site()
	if err != nil {
		return enrol.State{}, err
	}
	return enrol.Apply(ctx, stores.Rules(), site, rules)
}

// RemoveRule removes the rule name.
func (l *Local) RemoveRule(ctx context.Context, name string) error {
	stores, err := l.Stores(ctx)
	if err != nil {
		return err
	}
	_, err = enrol.Remove(ctx, stores.Rules(), name)
	return err
}

// PreviewRules previews the rules over the stores' inbox.
func (l *Local) PreviewRules(ctx context.Context) ([]enrol.Decision, error) {
	stores, err := l.Stores(ctx)
	if err != nil {
		return nil, err
	}
	site, err := l.site()
	if err != nil {
		return nil, err
	}
	inbox, err := stores.Discovered()
	if err != nil {
		return nil, err
	}
	return enrol.PreviewInbox(ctx, stores.Rules(), stores.Registrations(), inbox, site, time.Now())
}
