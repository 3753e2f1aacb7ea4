package registrar

import (
	"context"
	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"

	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Reinstall re-arms the consumed registration name of the folder,
// keeping its data pools unless req.WipeData ([regbackend.Reinstall]).
func (l *Local) Reinstall(ctx context.Context, name string, req apitype.ReinstallRequest) (registry.Registration, error) {
	stores, err := l.Stores(ctx)
	if err != nil {
		return registry.Registration{}, err
	}
	secrets, err := stores.Secrets(ctx)
	if err != nil {
		return registry.Registration{}, err
	}
	return regbackend.Reinstall(ctx, stores.Registrations(), secrets, name, regbackend.ReinstallOptions{WipeData: req.WipeData})
}
