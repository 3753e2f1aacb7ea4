package regbackend

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// viewMaxAge is how long a read of the pending registrations answers
// the requests that find their machine's pin in it (see [Backend.byPin]).
// What a pinned lookup reads from a view is checked against the
// registration's file before it is used, so the age bounds only what a
// view cannot show: another registration, made meanwhile by another
// process, that also pins the machine (which would make it ambiguous).
const viewMaxAge = time.Second

// regView is one read of the pending registrations, shared read-only by
// the requests that use it, with an index of their pins.
type regView struct {
	// started is when the read began: the view holds every change made
	// before it.
	started time.Time
	pending []registry.Registration
	broken  []registry.Broken
	// byPin holds the indexes into pending of the registrations that pin
	// a key of [pinKeys].
	byPin map[string][]int
}

// viewCall is a read of the registrations in progress, which requests
// that need one wait for rather than reading again.
type viewCall struct {
	started time.Time
	done    chan struct{}
	v       *regView
	err     error
}

// views shares reads of the pending registrations between concurrent
// requests: a request that needs a read begun no earlier than some time
// takes the last one, or waits for the one in progress, or starts one.
// So n requests at once cost one or two reads of the store, not n.
type views struct {
	mu   sync.Mutex
	last *regView
	call *viewCall
}

// view returns a read of the pending registrations begun at or after
// notBefore.
func (b *Backend) view(ctx context.Context, notBefore time.Time) (*regView, error) {
	for {
		b.views.mu.Lock()
		if v := b.views.last; v != nil && !v.started.Before(notBefore) {
			b.views.mu.Unlock()
			return v, nil
		}
		c := b.views.call
		if c == nil {
			c = &viewCall{started: time.Now(), done: make(chan struct{})}
			b.views.call = c
			b.views.mu.Unlock()
			// The read serves every waiter: one request's end must not
			// end it.
			c.v, c.err = b.readView(context.WithoutCancel(ctx), c.started)
			b.views.mu.Lock()
			if c.err == nil {
				b.views.last = c.v
			}
			b.views.call = nil
			b.views.mu.Unlock()
			close(c.done)
		} else {
			b.views.mu.Unlock()
			select {
			case <-c.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if !c.started.Before(notBefore) {
			return c.v, c.err
		}
		// That read began before the caller needed one: take the next.
	}
}

// forgetView drops the last read, so the next request reads the store
// again: after a change the backend made itself that a pinned lookup's
// check of the file would not see (a registration re-armed).
func (b *Backend) forgetView() {
	b.views.mu.Lock()
	b.views.last = nil
	b.views.mu.Unlock()
}

// readView reads the pending registrations and indexes their pins.
func (b *Backend) readView(ctx context.Context, started time.Time) (*regView, error) {
	pending, broken, err := b.cfg.Store.Scan(ctx)
	if err != nil {
		return nil, err
	}
	v := &regView{started: started, pending: pending, broken: broken, byPin: make(map[string][]int, len(pending))}
	for i, r := range pending {
		for _, k := range registrationKeys(r) {
			if !slices.Contains(v.byPin[k], i) {
				v.byPin[k] = append(v.byPin[k], i)
			}
		}
	}
	return v, nil
}

// registrationKeys are the index keys of r's pins.
func registrationKeys(r registry.Registration) []string {
	var keys []string
	for _, m := range r.MACs {
		if n, ok := answer.CanonicalMAC(m); ok {
			keys = append(keys, "m"+n)
		}
	}
	if s := strings.TrimSpace(r.Serial); s != "" {
		keys = append(keys, "s"+strings.ToLower(s))
	}
	if u := strings.TrimSpace(r.UUID); u != "" {
		keys = append(keys, "u"+strings.ToLower(u))
	}
	return keys
}

// pinKeys are the index keys a machine posting macs, serial and uuid
// is looked up by; placeholders are never matched ([registry.Match]).
func pinKeys(macs []string, serial, uuid string) []string {
	var keys []string
	for _, m := range macs {
		if n, ok := answer.CanonicalMAC(m); ok {
			keys = append(keys, "m"+n)
		}
	}
	if s := strings.TrimSpace(serial); !registry.IsPlaceholderSerial(s) {
		keys = append(keys, "s"+strings.ToLower(s))
	}
	if u := strings.TrimSpace(uuid); !registry.IsPlaceholderUUID(u) {
		keys = append(keys, "u"+strings.ToLower(u))
	}
	return keys
}

// pinning returns the registrations of v that pin one of keys, in the
// view's order. [registry.Match] over them picks what it would pick over all of
// v's registrations when one pins the machine: the others cannot match
// by a pin.
func (v *regView) pinning(keys []string) []registry.Registration {
	var idx []int
	for _, k := range keys {
		for _, i := range v.byPin[k] {
			if !slices.Contains(idx, i) {
				idx = append(idx, i)
			}
		}
	}
	slices.Sort(idx)
	out := make([]registry.Registration, len(idx))
	for j, i := range idx {
		out[j] = v.pending[i]
	}
	return out
}

// pinnedMatch is a machine's registration found by a pin.
type pinnedMatch struct {
	reg    registry.Registration // as read from the store just now
	reason registry.MatchReason
	// names are the pending registrations that pin the machine; more
	// than one is ambiguous.
	names      []string
	candidates []registry.Registration
}

// byPin finds the pending registration that pins the machine in a read
// of the registrations at most viewMaxAge old, without reading them
// all: found is false when none pins it there (the caller then reads
// them afresh and applies every rule of [registry.Match]). The registration
// found is read again from the store ([registry.Registrations.Get]) and must
// still match the same way, so a view older than a change (a
// registration consumed, deleted or re-registered since, by this
// process or another) is never acted on; the registration returned is
// that fresh read, which shares nothing with the view.
func (b *Backend) byPin(ctx context.Context, macs []string, serial, uuid string) (pinnedMatch, bool) {
	v, err := b.view(ctx, time.Now().Add(-viewMaxAge))
	if err != nil {
		return pinnedMatch{}, false
	}
	cands := v.pinning(pinKeys(macs, serial, uuid))
	if len(cands) == 0 {
		return pinnedMatch{}, false
	}
	reg, reason, err := registry.Match(cands, macs, serial, uuid)
	if err != nil || reason == registry.MatchOnlyPending {
		return pinnedMatch{}, false
	}
	fresh, ok := b.recheck(ctx, reg.Name, reason, macs, serial, uuid)
	if !ok {
		return pinnedMatch{}, false
	}
	return pinnedMatch{reg: fresh, reason: reason, names: registry.MatchingAll(cands, macs, serial, uuid), candidates: cands}, true
}

// recheck reads the pending registration name again and reports whether
// it still matches the machine for the same reason.
func (b *Backend) recheck(ctx context.Context, name string, reason registry.MatchReason, macs []string, serial, uuid string) (registry.Registration, bool) {
	fresh, err := b.cfg.Store.Get(ctx, name)
	if err != nil {
		return registry.Registration{}, false
	}
	if _, r, err := registry.Match([]registry.Registration{fresh}, macs, serial, uuid); err != nil || r != reason {
		return registry.Registration{}, false
	}
	return fresh, true
}

// answerMatch picks the pending registration that answers the machine
// ([registry.Match]), refusing an ambiguous or blocked match. A machine that a
// registration pins is looked up in a shared read of the registrations
// ([Backend.byPin]); else they are read afresh, and the one matched is
// read again before it is used. The registration returned shares
// nothing with a shared read.
func (b *Backend) answerMatch(ctx context.Context, macs []string, serial, uuid string) (registry.Registration, registry.MatchReason, error) {
	arrived := time.Now()
	if m, ok := b.byPin(ctx, macs, serial, uuid); ok {
		if len(m.names) > 1 {
			return registry.Registration{}, "", &backend.Refusal{Status: 409, Reason: ambiguous(m.names, m.candidates).Error()}
		}
		return m.reg, m.reason, nil
	}
	for try := 0; ; try++ {
		v, err := b.view(ctx, arrived)
		if err != nil {
			return registry.Registration{}, "", fmt.Errorf("read registrations: %w", err)
		}
		reg, reason, err := registry.Match(v.pending, macs, serial, uuid)
		if err != nil {
			return registry.Registration{}, "", errNoMatch
		}
		if names := registry.MatchingAll(v.pending, macs, serial, uuid); len(names) > 1 {
			return registry.Registration{}, "", &backend.Refusal{Status: 409, Reason: ambiguous(names, v.pending).Error()}
		}
		if reason == registry.MatchOnlyPending && len(v.broken) > 0 {
			return registry.Registration{}, "", &backend.Refusal{Status: 409, Reason: blockedBy(v.broken).Error()}
		}
		if fresh, ok := b.recheck(ctx, reg.Name, reason, macs, serial, uuid); ok {
			return fresh, reason, nil
		}
		// Changed since the read (consumed, deleted or re-registered):
		// read once more, then refuse.
		if try > 0 {
			return registry.Registration{}, "", errNoMatch
		}
		arrived = time.Now()
	}
}
