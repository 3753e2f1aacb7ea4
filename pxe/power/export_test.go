package power

import (
	"context"

	"github.com/plasmactl/plasma-node/pxe/registrar"
)

// Forget removes node name's BMC password once no registration of
// that name, pending or consumed, names a BMC (after an unregister), by
// [registrar.Forget].
func Forget(ctx context.Context, req Request) error {
	regs, err := req.registrations()
	if err != nil {
		return err
	}
	secrets, err := req.secrets()
	if err != nil {
		return err
	}
	return registrar.Forget(ctx, regs, secrets, req.Name)
}
