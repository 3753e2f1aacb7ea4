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
)

// DefaultWaitTimeout bounds [ProvisionOptions.Wait] when WaitTimeout is
// zero: long enough for a server's firmware, the installer and its
// reboot.
const DefaultWaitTimeout = 45 * time.Minute

// ErrCannotStart: Boot was asked of a provider that cannot start its
// servers (every provider but pxe).
var ErrCannotStart = errors.New("provider cannot start its servers")

// NotReadyError is the error of a provision whose started servers did
// not all become ready: some failed to start, the wait timed out, or it
// was interrupted. Nothing was powered off.
type NotReadyError struct {
	// Platform is the platform provisioned.
	Platform string
	// NotReady are the hostnames not ready, sorted.
	NotReady []string
	// TimedOut says the wait ran out; Interrupted that its context was
	// cancelled (Ctrl-C).
	TimedOut, Interrupted bool
	// Err joins the servers' own errors (a BMC's words), nil when none
	// failed.
	Err error
}

// Error says which servers are not ready and why the wait ended.
func (e *NotReadyError) Error() string {
	why := "not ready"
	switch {
	case e.Interrupted:
		why = "still pending (stopped waiting; nothing was powered off)"
	case e.TimedOut:
		why = "not installed before the timeout"
	}
	s := fmt.Sprintf("platform %s: %s %s", e.Platform, strings.Join(e.NotReady, ", "), why)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
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
	wctx := ctx
	if o.Wait {
		timeout := o.WaitTimeout
		if timeout <= 0 {
			timeout = DefaultWaitTimeout
		}
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	fn := o.OnProgress
	if fn == nil {
		fn = func(providers.Progress) {}
	}
	notReady, err := s.Start(wctx, at, hosts, o.Wait, fn)
	res.Started = hosts
	for _, h := range hosts {
		if !slices.Contains(notReady, h) {
			res.Ready = append(res.Ready, h)
		}
	}
	if len(notReady) == 0 || (!o.Wait && err == nil) {
		return nil
	}
	slices.Sort(notReady)
	e := &NotReadyError{Platform: o.Platform, NotReady: notReady, Err: err}
	if o.Wait && wctx.Err() != nil {
		e.Interrupted = ctx.Err() != nil
		e.TimedOut = !e.Interrupted
		if errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, context.DeadlineExceeded) {
			e.Err = nil // the servers' own errors only
		}
	}
	return e
}
