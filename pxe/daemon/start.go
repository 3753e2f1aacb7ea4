package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// startLocked starts serving the site's window rec here until its
// deadline and waits until it serves or fails; w.mu is held.
func (w *windows) startLocked(rec window.Site) (api.WindowStatus, error) {
	cfg := w.cfg
	cfg.TTL = time.Until(rec.Deadline)
	cfg.SecureBoot = cfg.SecureBoot || rec.SecureBoot
	cfg.Discover = cfg.Discover || rec.Discover
	if cfg.TTL <= 0 {
		return api.WindowStatus{}, fmt.Errorf("%w: the window's deadline %s is not in the future; it stays closed", api.ErrBadRequest, rec.Deadline.Format(time.RFC3339Nano))
	}
	cfg, b, err := withBackend(w.ctx, w.stores, cfg, w.siteSettings, w.log)
	if err != nil {
		return api.WindowStatus{}, fmt.Errorf("%w: %w", api.ErrNotStarted, err)
	}
	opened := make(chan *window.Record, 1)
	cfg.OnOpen = func(pw *window.Record) { opened <- pw }
	sd := &said{}
	cfg.Logger = logSaid(cfg.Logger, sd)
	srv, err := pxe.New(cfg)
	if err != nil {
		b.Close()
		return api.WindowStatus{}, fmt.Errorf("%w: the daemon's window settings: %w", api.ErrBadRequest, err)
	}
	// The server's TTL runs from when it starts serving, later than now
	// by its start; the site's deadline bounds it here too, also while
	// the store cannot be read.
	ctx, cancel := context.WithDeadlineCause(w.ctx, rec.Deadline, pxe.ErrWindowExpired)
	r := &running{srv: srv, cancel: cancel, done: make(chan struct{}), win: rec, said: sd}
	go func() {
		stop := func() {}
		if w.stores != nil {
			stop = ejectWhileOpen(ctx, newBMCs(w.stores, w.stores.Events(), w.log))
		}
		r.err = srv.Serve(ctx)
		stop()
		b.Close()
		if errors.Is(r.err, context.DeadlineExceeded) && context.Cause(ctx) == pxe.ErrWindowExpired {
			r.err = pxe.ErrWindowExpired
		}
		cancel()
		close(r.done)
		w.ended(r)
	}()
	var pw *window.Record
	select {
	case pw = <-opened:
	case <-r.done:
		var held *window.HeldError
		if errors.As(r.err, &held) {
			return api.WindowStatus{}, r.err
		}
		err := fmt.Errorf("%w: %w", api.ErrNotStarted, r.err)
		if l := sd.list(); len(l) > 0 {
			err = fmt.Errorf("%w (it warned: %s)", err, strings.Join(l, "; "))
		}
		return api.WindowStatus{}, err
	}
	sd.stop()
	r.pw = pw
	w.cur = r
	return api.WindowStatus{Open: true, Daemon: true, PID: pw.PID, Started: pw.Started, Deadline: pw.Deadline, HTTP: pw.HTTP, URL: pw.URL,
		DHCPInterface: pw.DHCPInterface, TFTP: pw.TFTP, CertFingerprint: pw.CertFingerprint, SecureBoot: pw.SecureBoot, Discover: pw.Discover, Warnings: sd.list()}, nil
}

// ended forgets a window that stopped serving here. At its deadline it
// ends the site's window (each host does; the first one removes the
// record). A window that failed here is left to the site's other hosts
// and tried again here after retryFailed.
func (w *windows) ended(r *running) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur == r {
		w.cur = nil
	}
	switch {
	case (w.stopping || w.ctx.Err() != nil) && !r.closing:
		// The daemon stops: the record stays, the next start reopens.
	case r.closing:
	case errors.Is(r.err, pxe.ErrWindowExpired):
		w.log.Info("window closed at its deadline")
		ctx, cancel := context.WithTimeout(w.ctx, shutdownGrace)
		defer cancel()
		if err := w.site.End(ctx, r.win); err != nil {
			w.log.Warn("cannot end the site's window at its deadline; it reads as closed anyway", "err", err)
		}
	default:
		w.log.Error("the window failed on this host; trying again later", "err", r.err, "in", retryFailed)
		w.failed = failure{win: r.win, at: time.Now()}
	}
}
