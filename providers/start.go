package providers

import (
	"context"
	"time"
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

// Steps of a [Progress], in the order a bare-metal machine goes through
// them.
const (
	StepStarted   = "started"   // the machine was told to boot (PXE once, power on)
	StepOffer     = "offer"     // it got a boot file offer (proxy-DHCP)
	StepIPXE      = "ipxe"      // iPXE fetched its boot script
	StepKernel    = "kernel"    // the installer's kernel was downloaded
	StepAnswer    = "answer"    // the installer got its answer
	StepInstalled = "installed" // the installer reported success
	StepFailed    = "failed"    // the machine could not be started
)

// Progress is one step of one server started by a [Starter].
type Progress struct {
	// Hostname is the server's.
	Hostname string
	// Step is one of the Step constants.
	Step string
	// Time is when it happened.
	Time time.Time
	// Detail says more, in the provider's words (the BMC's protocol, the
	// file, the match).
	Detail string
	// Err is set with [StepFailed].
	Err error
}
