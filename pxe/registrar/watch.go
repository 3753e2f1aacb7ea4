package registrar

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// streamSettle is how long [WatchInstall] gives the event stream to
// open: it gives no sign it is open, and a machine's first event comes
// a BMC's power-on and a firmware's DHCP later.
const streamSettle = 300 * time.Millisecond

// InstallWatch follows a [Provisioner]'s events for one machine's
// install, opened before the machine is booted so that no step is
// missed. It powers nothing off.
type InstallWatch struct {
	name  string
	macs  []string
	steps chan backend.Event
	errc  chan error
	stop  context.CancelFunc
}

// InstallResult is what [InstallWatch.Wait] saw.
type InstallResult struct {
	// Steps are the kinds of the machine's steps in the order first
	// seen, after "started".
	Steps []string
	// Took is the time from Wait's start to the install.
	Took time.Duration
}

// ErrEventStream is wrapped by [InstallWatch.Wait]'s error when the
// event stream failed.
var ErrEventStream = errors.New("following the window's events")

// WatchInstall starts following the events of name (by name, or by its
// MACs before it is matched) in p from now.
func WatchInstall(ctx context.Context, p Provisioner, name string) (*InstallWatch, error) {
	ns, err := p.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	w := &InstallWatch{name: name, steps: make(chan backend.Event, 64), errc: make(chan error, 1)}
	for _, x := range ns {
		if x.Name == name {
			w.macs = append(w.macs, x.MACs...)
		}
	}
	sctx, stop := context.WithCancel(ctx)
	w.stop = stop
	opened := make(chan struct{})
	go func() {
		time.AfterFunc(streamSettle, func() { close(opened) })
		w.errc <- p.Events(sctx, events.FromNow, func(_ string, e backend.Event) error {
			if w.mine(e) {
				select {
				case w.steps <- e:
				case <-sctx.Done():
				}
			}
			return nil
		})
	}()
	<-opened
	return w, nil
}

// Stop stops following the events; Wait stops too when it returns.
func (w *InstallWatch) Stop() { w.stop() }

// mine reports whether e is a step of the watched machine's install.
func (w *InstallWatch) mine(e backend.Event) bool {
	switch e.Kind {
	case events.DHCPOffer, events.Script, events.Kernel, events.Installed:
	case events.Answer:
		if e.Status != 200 {
			return false
		}
	default:
		return false
	}
	return e.Node == w.name || (e.Node == "" && slices.ContainsFunc(w.macs, func(m string) bool { return strings.EqualFold(m, e.MAC) }))
}

// Wait calls step with each of the machine's steps (an event whose Time
// is set) until it is installed, timeout passes or ctx ends. The result
// holds the steps seen in every case; the error wraps
// context.DeadlineExceeded for the timeout, context.Canceled when ctx
// ended, and [ErrEventStream] for a stream that failed.
func (w *InstallWatch) Wait(ctx context.Context, timeout time.Duration, step func(backend.Event)) (InstallResult, error) {
	defer w.stop()
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res := InstallResult{Steps: []string{"started"}}
	for {
		select {
		case e := <-w.steps:
			if e.Time.IsZero() {
				e.Time = time.Now()
			}
			step(e)
			if !slices.Contains(res.Steps, string(e.Kind)) {
				res.Steps = append(res.Steps, string(e.Kind))
			}
			if e.Kind == events.Installed {
				res.Took = time.Since(start)
				return res, nil
			}
		case err := <-w.errc:
			if ctx.Err() == nil {
				return res, fmt.Errorf("%w: %w", ErrEventStream, err)
			}
		case <-ctx.Done():
			return res, fmt.Errorf("install of %s: %w", w.name, ctx.Err())
		}
	}
}

// Follow calls fn with each event of p from now until ctx ends or, when
// untilClosed, until the window is closed, a poll (a second) after it
// was seen closed so that the last events are passed; closed says the
// window closed. Either end is a nil error.
func Follow(ctx context.Context, p Provisioner, untilClosed bool, fn func(backend.Event) error) (closed bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ended atomic.Bool
	if untilClosed {
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for seen := false; ; {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				if seen {
					ended.Store(true)
					cancel()
					return
				}
				w, err := p.Window(ctx)
				seen = err == nil && !w.Open
			}
		}()
	}
	err = p.Events(ctx, events.FromNow, func(_ string, e backend.Event) error { return fn(e) })
	if ended.Load() {
		return true, nil
	}
	if errors.Is(err, context.Canceled) {
		return false, nil
	}
	return false, err
}
