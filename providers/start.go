package providers

import (
	"context"
	"time"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// Starter is a [Direct] provider that can start the servers it made and
// follow them until they are ready (pxe: a one-time PXE boot and power
// on through each machine's BMC, ready once its installer reported
// success).
type Starter interface {
	Direct

	// Start starts each of hostnames at a location and, when wait is set,
	// follows them, calling fn with every step as it happens, until each
	// is ready, ctx ends, or one cannot be started. A server that cannot
	// be started is a [Progress] with Err and does not stop the others.
	// It never powers a machine off. It returns the hostnames not ready
	// (all of them when not waiting) and an error joining each server's.
	Start(ctx context.Context, at Location, hostnames []string, wait bool, fn func(Progress)) (notReady []string, err error)
}

// Reinstaller is a [Direct] provider that can install again the servers
// it installed (pxe: an installed registration re-armed as a new one-shot
// with a new root password and, with a BMC, its machine booted into the
// installer).
type Reinstaller interface {
	Direct

	// Reinstall re-arms each of hostnames at a location and starts those
	// it can, and with o.Wait follows them as [Starter.Start] does,
	// calling fn with every step. It returns the hostnames not installed
	// again (all of them when not waiting) and an error joining each
	// server's.
	Reinstall(ctx context.Context, at Location, hostnames []string, o ReinstallOptions, fn func(Progress)) (notReady []string, err error)
}

// ReinstallOptions say how [Reinstaller.Reinstall] installs servers again.
type ReinstallOptions struct {
	// Wait follows the servers until they are installed again.
	Wait bool
	// WipeData has each install create the server's data pools anew
	// over what their disks hold; false (the default) keeps them.
	WipeData bool
}

// Progress is one step of one server started by a [Starter].
type Progress struct {
	// Hostname is the server's.
	Hostname string
	// Step is what happened, in the timeline's vocabulary: [events.Started],
	// [events.DHCPOffer], [events.Script], [events.Kernel],
	// [events.Answer], [events.Installed], or [events.Failed].
	Step events.Kind
	// Time is when it happened.
	Time time.Time
	// Detail says more, in the provider's words (the BMC's protocol, the
	// file, the match).
	Detail string
	// Err is set with [events.Failed].
	Err error
}
