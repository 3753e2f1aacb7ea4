package daemon

import (
	"context"
	"errors"
	"time"

	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// ejectGrace bounds the ejections when a window closes.
const ejectGrace = 30 * time.Second

// ejectWhileOpen takes the installer's media back while a window is open
// ([power.Eject]), so that a machine never boots an old answer: from a
// node as soon as its install reports in (the installed event), and,
// when the returned stop is called as the window closes, from every
// node that boots by virtual media. Without media served it does
// nothing. Failures are logged: the next boot replaces a stale medium
// of ours anyway.
func ejectWhileOpen(ctx context.Context, b *bmcs) (stop func()) {
	if b.media == nil || b.events == nil {
		return func() {}
	}
	// From the last event now, not from when the goroutine starts: an
	// install reported meanwhile is not missed.
	after := events.FromNow
	if recs, err := b.events.Read(ctx, "", 0); err == nil && len(recs) > 0 {
		after = recs[len(recs)-1].ID
	} else if err == nil {
		after = ""
	}
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Only the installed events, through the store's own filter: the
		// window's DHCP offers and boot steps are most of its log, and
		// decoding each again slows every one of them.
		err := events.FollowKinds(fctx, b.events, after, []events.Kind{events.Installed}, func(r events.Record) error {
			if r.Event.Node != "" {
				b.eject(fctx, r.Event.Node, "installed")
			}
			return nil
		})
		if err != nil && !errors.Is(err, context.Canceled) {
			b.log.Warn("virtual media: cannot follow the event log; media are ejected when the window closes", "err", err)
		}
	}()
	return func() {
		cancel()
		<-done
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ejectGrace)
		defer cancel()
		b.ejectAll(ctx)
	}
}

// eject runs power.Eject for node name, logging a failure.
func (b *bmcs) eject(ctx context.Context, name, why string) {
	req, err := b.req(ctx, name)
	if err == nil {
		err = power.Eject(ctx, req)
	}
	if err != nil {
		b.log.Warn("virtual media: cannot eject the installer's medium", "node", name, "after", why, "err", err)
	}
}

// ejectAll ejects the media of every registration, pending or consumed,
// that boots by virtual media.
func (b *bmcs) ejectAll(ctx context.Context) {
	regs := b.stores.Registrations()
	pending, _, err := regs.Scan(ctx)
	if err != nil {
		b.log.Warn("virtual media: cannot list the registrations to eject their media", "err", err)
		return
	}
	consumed, err := regs.Consumed(ctx)
	if err != nil {
		b.log.Warn("virtual media: cannot list the registrations to eject their media", "err", err)
	}
	site, err := b.site()
	if err != nil {
		b.log.Warn("virtual media: cannot read the site settings to eject media", "err", err)
	}
	for _, r := range append(pending, consumed...) {
		if m, _ := site.BootOf(r); m == registry.BootVirtualMedia && r.BMC != nil {
			b.eject(ctx, r.Name, "the window closed")
		}
	}
}
