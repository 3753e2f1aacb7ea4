package regbackend

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// BootFailedError is [Reinstall]'s error when the registration was
// re-armed but its BMC's boot failed: it is pending again, and a later
// boot boots it.
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

// Booter is how [Reinstall] boots a re-armed registration that has a
// BMC: package power's, or the API's. Nil, or a nil Boot, boots none.
type Booter struct {
	// WindowOpen reports whether the provisioning window is open.
	WindowOpen func(ctx context.Context) (bool, error)
	// Boot boots name into the installer through its BMC.
	Boot func(ctx context.Context, name string) error
}

// ReinstallOptions say how [Reinstall] re-arms a registration.
type ReinstallOptions struct {
	// WipeData has the install create the data pools anew over what
	// their disks hold ([registry.Registration.WipeData]). False (the
	// default) keeps them: the first-boot script imports the pools it
	// finds on their disks.
	WipeData bool
	// Boot boots a re-armed registration that has a BMC; nil boots none.
	Boot *Booter
}

// Reinstall re-arms the consumed registration name as a new one-shot:
// pending again, with its pins and its BMC, so that its machine is
// answered once more (and its script is the installer's again, not the
// installed machine's exit, for that one install). Its data pools are
// kept unless o.WipeData. The new answer makes a new root password; the
// current one is kept as the previous one (when secrets is a
// [secret.Previous]) until the new install reports in. With o.Boot, a
// registration with a BMC is refused before anything is written while
// the window is closed ([window.ErrClosed]), and booted once re-armed
// ([*BootFailedError] when that fails). It returns the registration as
// it is now pending.
//
// Errors: one wrapping [registry.ErrNotFound] when no consumed
// registration has the name (a pending one is already armed); one
// wrapping [registry.ErrInvalidRegistration] (such as
// [registry.ErrInvalidPool] for a data-pool disk that the boot disk's
// filter would also match) when the registration is not one to install,
// before anything is written.
func Reinstall(ctx context.Context, regs registry.Registrations, secrets secret.Store, name string, o ReinstallOptions) (registry.Registration, error) {
	if err := registry.ValidateName(name); err != nil {
		return registry.Registration{}, err
	}
	consumed, err := regs.Consumed(ctx)
	if err != nil {
		return registry.Registration{}, fmt.Errorf("reinstall %s: %w", name, err)
	}
	i := slices.IndexFunc(consumed, func(r registry.Registration) bool { return r.Name == name })
	if i < 0 {
		_, gerr := regs.Get(ctx, name)
		return registry.Registration{}, fmt.Errorf("reinstall %s: %w", name, registry.NotConsumed(name, gerr == nil, "reinstall"))
	}
	r := consumed[i]
	r.Consumed = nil
	r.WipeData = o.WipeData
	if err := r.Validate(); err != nil {
		return registry.Registration{}, fmt.Errorf("reinstall %s: %w", name, err)
	}
	boot := cmp.Or(o.Boot, &Booter{})
	if r.BMC != nil && boot.Boot != nil {
		if open, err := boot.WindowOpen(ctx); err != nil || !open {
			return registry.Registration{}, cmp.Or(err, fmt.Errorf("reinstall %s: %w", name, window.ErrClosed))
		}
	}
	prev, keeps := secrets.(secret.Previous)
	if keeps {
		if err := prev.KeepPrevious(ctx, name); err != nil {
			return registry.Registration{}, fmt.Errorf("reinstall %s: %w", name, err)
		}
	}
	if err := regs.Rearm(ctx, name, registry.RearmOptions{Force: true, WipeData: o.WipeData}); err != nil {
		if keeps {
			_ = prev.ForgetPrevious(context.WithoutCancel(ctx), name) // nothing re-armed: the current password stands, even if the request ended
		}
		return registry.Registration{}, fmt.Errorf("reinstall %s: %w", name, err)
	}
	if r.BMC != nil && boot.Boot != nil {
		if err := boot.Boot(ctx, name); err != nil {
			return r, &BootFailedError{Name: name, Err: err}
		}
	}
	return r, nil
}
