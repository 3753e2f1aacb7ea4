package regbackend

import (
	"context"
	"fmt"
	"slices"

	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// Reinstall re-arms the consumed registration name as a new one-shot:
// pending again, with its pins and its BMC, so that its machine is
// answered once more (and its script is the installer's again, not the
// installed machine's exit, for that one install). The new answer makes
// a new root password; the current one is kept as the previous one
// (when secrets is a [secret.Previous]) until the new install reports
// in. It returns the registration as it is now pending.
//
// Errors: one wrapping [ErrNotFound] when no consumed
// registration has the name (a pending one is already armed).
func Reinstall(ctx context.Context, regs registry.Registrations, secrets secret.Store, name string) (registry.Registration, error) {
	if err := registry.ValidateName(name); err != nil {
		return registry.Registration{}, err
	}
	consumed, err := regs.Consumed(ctx)
	if err != nil {
		return registry.Registration{}, fmt.Errorf("reinstall %s: %w", name, err)
	}
	i := slices.IndexFunc(consumed, func(r registry.Registration) bool { return r.Name == name })
	if i < 0 {
		return registry.Registration{}, fmt.Errorf("reinstall %s: %w: no installed or consumed registration of that name", name, registry.ErrNotFound)
	}
	prev, keeps := secrets.(secret.Previous)
	if keeps {
		if err := prev.KeepPrevious(ctx, name); err != nil {
			return registry.Registration{}, fmt.Errorf("reinstall %s: %w", name, err)
		}
	}
	if err := regs.Rearm(ctx, name, true); err != nil {
		if keeps {
			_ = prev.ForgetPrevious(context.WithoutCancel(ctx), name) // nothing re-armed: the current password stands, even if the request ended
		}
		return registry.Registration{}, fmt.Errorf("reinstall %s: %w", name, err)
	}
	r := consumed[i]
	r.Consumed = nil
	return r, nil
}
