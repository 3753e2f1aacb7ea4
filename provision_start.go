package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// DefaultWaitTimeout bounds [ProvisionOptions.Wait] when WaitTimeout is
// zero: long enough for a server's firmware, the installer and its
// reboot.
const DefaultWaitTimeout = 45 * time.Minute

// waitContext is ctx bounded by timeout (DefaultWaitTimeout when not
// positive) when wait is set, else ctx.
func waitContext(ctx context.Context, wait bool, timeout time.Duration) (context.Context, context.CancelFunc) {
	if !wait {
		return ctx, func() {}
	}
	if timeout <= 0 {
		timeout = DefaultWaitTimeout
	}
	return context.WithTimeout(ctx, timeout)
}

// ErrCannotStart: Boot was asked of a provider that cannot start its
// servers (every provider but pxe).
var ErrCannotStart = errors.New("provider cannot start its servers")

// NotReadyError is the error of a provision whose started servers did
// not all become ready: some failed to start, the wait timed out, or it
// was interrupted. Nothing was powered off.
type NotReadyError struct {
	// Platform is the platform provisioned.
	Platform string
	// NotReady are the hostnames not ready, sorted; Failed those of them
	// that could not be started (their errors are in Err).
	NotReady, Failed []string
	// TimedOut says the wait ran out; Interrupted that its context was
	// cancelled (Ctrl-C).
	TimedOut, Interrupted bool
	// Err joins the servers' own errors (a BMC's words), nil when none
	// failed.
	Err error
}

// Error says which servers are not ready and why the wait ended.
func (e *NotReadyError) Error() string {
	var waiting []string
	for _, h := range e.NotReady {
		if !slices.Contains(e.Failed, h) {
			waiting = append(waiting, h)
		}
	}
	var parts []string
	if len(waiting) > 0 {
		why := "not ready"
		switch {
		case e.Interrupted:
			why = "still pending (stopped waiting; nothing was powered off)"
		case e.TimedOut:
			why = "not installed before the timeout"
		}
		parts = append(parts, strings.Join(waiting, ", ")+" "+why)
	}
	if len(e.Failed) > 0 {
		s := strings.Join(e.Failed, ", ") + " could not be started"
		if e.Err != nil {
			s += ": " + strings.ReplaceAll(e.Err.Error(), "\n", "; ")
		}
		parts = append(parts, s)
	} else if e.Err != nil {
		parts = append(parts, e.Err.Error())
	}
	return fmt.Sprintf("platform %s: %s", e.Platform, strings.Join(parts, "; "))
}

// withoutContextErrors returns err without the context's own errors
// (the wait's end is said by TimedOut and Interrupted).
func withoutContextErrors(err error) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	var keep []error
	for _, e := range errs {
		if !errors.Is(e, context.Canceled) && !errors.Is(e, context.DeadlineExceeded) {
			keep = append(keep, e)
		}
	}
	return errors.Join(keep...)
}

// Unwrap returns the servers' errors.
func (e *NotReadyError) Unwrap() error { return e.Err }

// start boots the servers this run created (never one that existed: it
// may be installing) when o.Boot, and follows them when o.Wait.
func (p *Project) start(ctx context.Context, o ProvisionOptions, d providers.Direct, at providers.Location, existing, made []*nodes.Node, res *ProvisionResult) error {
	if !o.Boot {
		return nil
	}
	s, ok := d.(providers.Starter)
	if !ok {
		return fmt.Errorf("platform %s: provider %s: %w", o.Platform, d.Name(), ErrCannotStart)
	}
	var hosts []string
	for _, n := range made {
		if !slices.ContainsFunc(existing, func(e *nodes.Node) bool { return e.Hostname == n.Hostname }) {
			hosts = append(hosts, n.Hostname)
		}
	}
	if len(hosts) == 0 {
		return nil
	}
	wctx, cancel := waitContext(ctx, o.Wait, o.WaitTimeout)
	defer cancel()
	var failed []string
	fn := func(pr providers.Progress) {
		if pr.Step == events.Failed && !slices.Contains(failed, pr.Hostname) {
			failed = append(failed, pr.Hostname)
		}
		if o.OnProgress != nil {
			o.OnProgress(pr)
		}
	}
	notReady, err := s.Start(wctx, at, hosts, o.Wait, fn)
	res.Started = hosts
	for _, h := range hosts {
		if !slices.Contains(notReady, h) {
			res.Ready = append(res.Ready, h)
		}
	}
	if o.Wait && len(res.Ready) > 0 {
		p.refreshAfterWait(ctx, o, res)
	}
	if len(notReady) == 0 || (!o.Wait && err == nil) {
		return nil
	}
	slices.Sort(notReady)
	slices.Sort(failed)
	e := &NotReadyError{Platform: o.Platform, NotReady: notReady, Failed: failed, Err: err}
	if o.Wait && wctx.Err() != nil {
		e.Interrupted = ctx.Err() != nil
		e.TimedOut = !e.Interrupted
		e.Err = withoutContextErrors(e.Err) // the servers' own errors only
	}
	return e
}

// refreshAfterWait writes what the installers of the ready servers
// reported into their node files ([Project.Refresh]); a failure is
// logged, not returned: the servers are installed, and plasma-node
// refresh writes the files later.
func (p *Project) refreshAfterWait(ctx context.Context, o ProvisionOptions, res *ProvisionResult) {
	ref, err := p.Refresh(ctx, RefreshOptions{Platform: o.Platform, ProvisionerDir: o.ProvisionerDir})
	if err != nil {
		p.log.Warn("node files not refreshed with the installed addresses; run plasma-node refresh", "platform", o.Platform, "err", err)
		return
	}
	for _, r := range ref {
		host, _, _ := strings.Cut(r.Node, "@")
		if slices.Contains(res.Ready, host) {
			res.Refreshed = append(res.Refreshed, r)
		}
	}
}
