package enrol

import (
	"context"
	"fmt"
	"time"

	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Add checks r with the site's settings ([Rule.Check]) and keeps it in
// s ([State.Add]; replace replaces the rule of its name). Errors wrap
// [ErrInvalidRule], [ErrPriorityTaken] or [ErrExists]; nothing is kept
// then.
func Add(ctx context.Context, s Store, site registry.Site, r Rule, replace bool) (State, error) {
	if err := r.Check(site); err != nil {
		return State{}, err
	}
	return s.Update(ctx, func(st State) (State, error) { return st.Add(r, replace) })
}

// Apply checks each of rules and keeps them as s's whole set
// ([State.Apply]): the rules not among them are removed. Nothing is
// kept when one is refused.
func Apply(ctx context.Context, s Store, site registry.Site, rules []Rule) (State, error) {
	for _, r := range rules {
		if err := r.Check(site); err != nil {
			return State{}, err
		}
	}
	return s.Update(ctx, func(st State) (State, error) { return st.Apply(rules) })
}

// Remove removes the rule name from s; an error wrapping [ErrNotFound]
// when there is none.
func Remove(ctx context.Context, s Store, name string) (State, error) {
	return s.Update(ctx, func(st State) (State, error) { return st.Remove(name) })
}

// PreviewInbox is `rule test`: for each machine of inbox live now, the
// decision s's rules would make ([Preview]) over the registrations of
// regs, with the site's settings. It writes nothing.
func PreviewInbox(ctx context.Context, s Store, regs Registrations, inbox discovery.Store, site registry.Site, now time.Time) ([]Decision, error) {
	st, err := s.Read(ctx)
	if err != nil {
		return nil, err
	}
	recs, err := inbox.List(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("list discovered machines: %w", err)
	}
	return PreviewRecords(ctx, st, regs, recs, site, now)
}

// PreviewRecords is [PreviewInbox] of the machines recs (an inbox's
// entries as listed) under the rule state st. It writes nothing.
func PreviewRecords(ctx context.Context, st State, regs Registrations, recs []discovery.Record, site registry.Site, now time.Time) ([]Decision, error) {
	pending, _, err := regs.Scan(ctx)
	if err != nil {
		return nil, err
	}
	consumed, err := regs.Consumed(ctx)
	if err != nil {
		return nil, err
	}
	return Preview(st, recs, Inputs{Registrations: append(pending, consumed...), Site: site, Now: now}), nil
}
