package power

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// ErrWindowClosed is wrapped by [Reinstall]'s error for a registration
// with a BMC while the provisioning window is closed: nothing was
// written, since the machine its BMC boots would not be answered.
var ErrWindowClosed = errors.New("the provisioning window is closed")

// BootFailedError is [Reinstall]'s error when the registration was
// re-armed but its BMC's boot failed: it is pending again, and a later
// [Boot] boots it.
type BootFailedError struct {
	// Name is the re-armed registration's.
	Name string
	// Err is the boot's error.
	Err error
}

// Error says the registration was re-armed and why the boot failed.
func (e *BootFailedError) Error() string {
	return fmt.Sprintf("reinstall %s: re-armed, but its BMC's boot failed (boot it when that is fixed): %v", e.Name, e.Err)
}

// Unwrap returns the boot's error.
func (e *BootFailedError) Unwrap() error { return e.Err }

// ReinstallResult says what [Reinstall] did.
type ReinstallResult struct {
	// Boot is the BMC's boot; nil for a registration without a BMC,
	// whose machine the operator boots.
	Boot *BootResult
}

// Reinstall re-arms the consumed (installed) registration req.Name as a
// new one-shot with a new root password (regbackend.Reinstall) and, when
// it has a BMC, boots its machine into the installer ([Boot]). A
// registration with a BMC is refused before anything is written while
// the window is closed ([ErrWindowClosed]); a boot that fails after the
// re-arm is a [*BootFailedError]. An unknown name wraps
// registry.ErrNotFound.
func Reinstall(ctx context.Context, req Request) (ReinstallResult, error) {
	regs, err := req.registrations()
	if err != nil {
		return ReinstallResult{}, err
	}
	secrets, err := req.secrets()
	if err != nil {
		return ReinstallResult{}, err
	}
	consumed, err := regs.Consumed(ctx)
	if err != nil {
		return ReinstallResult{}, err
	}
	i := slices.IndexFunc(consumed, func(r registry.Registration) bool { return r.Name == req.Name })
	withBMC := i >= 0 && consumed[i].BMC != nil
	if withBMC {
		if req.Window == nil {
			return ReinstallResult{}, fmt.Errorf("reinstall %s: %w: the window state", req.Name, ErrNoStore)
		}
		w, err := registrar.WindowStatus(ctx, req.Window, time.Now())
		if err != nil {
			return ReinstallResult{}, err
		}
		if !w.Open {
			return ReinstallResult{}, fmt.Errorf("reinstall %s: %w", req.Name, ErrWindowClosed)
		}
	}
	if _, err := regbackend.Reinstall(ctx, regs, secrets, req.Name); err != nil {
		return ReinstallResult{}, err
	}
	if !withBMC {
		return ReinstallResult{}, nil
	}
	b, err := Boot(ctx, req)
	if err != nil {
		return ReinstallResult{}, &BootFailedError{Name: req.Name, Err: err}
	}
	return ReinstallResult{Boot: &b}, nil
}
