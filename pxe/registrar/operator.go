package registrar

import (
	"context"

	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/client"
)

// Operator is a node-provisioner as its operator drives it: a
// [Provisioner] that also acts on registered machines through their BMCs
// and closes the window. Through the API it is [Remote]; on this host it
// is pxe/daemon's Local, which links the BMC drivers and the window that
// this package links neither of.
type Operator interface {
	Provisioner
	// Power runs a power action (status, on, off or cycle) through
	// name's BMC and returns the power state after it.
	Power(ctx context.Context, name, action string) (string, error)
	// Boot boots name into the installer through its BMC: the next
	// boot PXE, once, then power on (or cycle).
	Boot(ctx context.Context, name string) (apitype.BootReply, error)
	// Reinstall re-arms the installed name, keeping its data pools
	// unless req.WipeData, and, with a BMC, boots it.
	Reinstall(ctx context.Context, name string, req apitype.ReinstallRequest) (apitype.ReinstallReply, error)
	// Disable closes the window; closed says one was open.
	Disable(ctx context.Context) (closed bool, err error)
}

// Remote is the [Operator] of a node-provisioner's API.
type Remote struct{ *client.Client }

var _ Operator = Remote{}

// Disable closes the API's window when it is open.
func (r Remote) Disable(ctx context.Context) (bool, error) {
	w, err := r.Window(ctx)
	if err != nil || !w.Open {
		return false, err
	}
	return true, r.CloseWindow(ctx)
}
