package daemon

import (
	"context"
	"time"
)

// pollEvery bounds how late a host learns of the site's window when the
// store's notifications are missed.
const pollEvery = time.Second

// advertiseEvery is how often a host tells the site it is there;
// hostsSeen how recent a host's word must be for status to list it.
const (
	advertiseEvery = 5 * time.Second
	hostsSeen      = 3 * advertiseEvery
)

// retryFailed is how long a host waits before it tries again to serve a
// window that failed on it.
const retryFailed = 10 * time.Second

// follow reconciles this host's window with the site's on every change
// the store signals and every pollEvery, until ctx ends.
func (w *windows) follow(ctx context.Context) {
	changes := w.site.Changes(ctx)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
		case <-tick.C:
		}
		w.reconcile(ctx)
	}
}

// reconcile starts the site's window here when it is open and not
// served here, and stops the one served here when the site's is closed,
// passed or another. When the store cannot be read, nothing changes: a
// window served here goes on until the deadline it was read with.
func (w *windows) reconcile(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, pollEvery*5)
	defer cancel()
	w.mu.Lock() // an open or close through the API is not raced
	defer w.mu.Unlock()
	if w.stopping || ctx.Err() != nil {
		return
	}
	rec, err := w.site.Read(rctx)
	if err != nil {
		if !w.outage {
			w.log.Warn("cannot read the site's window; this host serves on until the deadline it knows", "err", err)
		}
		w.outage = true
		return
	}
	if w.outage {
		w.log.Info("the site's window can be read again")
		w.outage = false
	}
	defer func() { w.joined = true }()
	now := time.Now()
	r := w.cur
	switch {
	case !rec.OpenAt(now):
		if rec != nil {
			msg := "the window's deadline passed; it stays closed"
			if !w.joined {
				msg = "the window's deadline passed while the daemon was down; it stays closed"
			}
			w.log.Info(msg, "deadline", rec.Deadline.Format(time.RFC3339))
			if err := w.site.End(rctx, *rec); err != nil {
				w.log.Warn("cannot end the passed window", "err", err)
			}
		}
		if r != nil && !r.closing {
			w.log.Info("the site's window was closed; stopping it here")
			r.closing = true
			r.cancel()
		}
	case r != nil && r.win.Same(rec):
	case r != nil:
		if !r.closing {
			r.closing = true // another opening: it starts once this ends
			r.cancel()
		}
	case rec.Same(&w.failed.win) && now.Sub(w.failed.at) < retryFailed:
	default:
		if _, err := w.startLocked(*rec); err != nil {
			w.log.Error("cannot serve the site's window on this host", "deadline", rec.Deadline.Format(time.RFC3339), "err", err)
			w.failed = failure{win: *rec, at: now}
		} else {
			w.log.Info("serving the site's window until its deadline", "deadline", rec.Deadline.Format(time.RFC3339), "opened_by", rec.By)
		}
	}
	w.advertiseLocked(rctx, false)
}

// advertiseLocked tells the site this host is there and what it serves:
// every advertiseEvery, or at once when that changed (or now). w.mu is
// held.
func (w *windows) advertiseLocked(ctx context.Context, now bool) {
	h := w.host
	if r := w.cur; r != nil && r.pw != nil && !r.closing {
		h.HTTP, h.URL, h.Serving = r.pw.HTTP, r.pw.URL, true
	}
	same := h.HTTP == w.advert.HTTP && h.URL == w.advert.URL && h.Serving == w.advert.Serving
	if !now && same && time.Since(w.advert.Seen) < advertiseEvery {
		return
	}
	h.Seen = time.Now().UTC()
	if err := w.site.Advertise(ctx, h); err != nil {
		w.log.Debug("cannot advertise this host to the site", "err", err)
		return
	}
	w.advert = h
}
