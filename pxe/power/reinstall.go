package power

import (
	"context"
	"fmt"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/registrar"
)

// Reinstall re-arms the consumed (installed) registration req.Name as a
// new one-shot with a new root password, keeping its data pools unless
// wipeData, and, when it has a BMC, boots
// its machine into the installer ([Boot]): regbackend.Reinstall, which
// refuses it while the window of req.Window is closed
// (window.ErrClosed) and makes a boot that fails after the
// re-arm a *regbackend.BootFailedError. An unknown name wraps
// registry.ErrNotFound. The boot is nil for a registration without a
// BMC, whose machine the operator boots.
func Reinstall(ctx context.Context, req Request, wipeData bool) (*BootResult, error) {
	regs, err := req.registrations()
	if err != nil {
		return nil, err
	}
	secrets, err := req.secrets()
	if err != nil {
		return nil, err
	}
	var res *BootResult
	_, err = regbackend.Reinstall(ctx, regs, secrets, req.Name, regbackend.ReinstallOptions{WipeData: wipeData, Boot: &regbackend.Booter{
		WindowOpen: func(ctx context.Context) (bool, error) {
			if req.Window == nil {
				return false, fmt.Errorf("reinstall %s: %w: the window state", req.Name, ErrNoStore)
			}
			w, err := registrar.WindowStatus(ctx, req.Window, time.Now())
			return w.Open, err
		},
		Boot: func(ctx context.Context, _ string) error {
			b, err := Boot(ctx, req)
			res = &b
			return err
		},
	}})
	if err != nil {
		return nil, err
	}
	return res, nil
}
