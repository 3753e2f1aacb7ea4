package registrar

import (
	"context"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"

	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Reinstall re-arms the consumed registration name of the folder
// ([regbackend.Reinstall]).
func (l *Local) Reinstall(ctx context.Context, name string) (registry.Registration, error) {
	stores, err := l.Stores(ctx)
	if err != nil {
		return registry.Registration{}, err
	}
	secrets, err := stores.Secrets(ctx)
	if err != nil {
		return registry.Registration{}, err
	}
	return regbackend.Reinstall(ctx, stores.Registrations(), secrets, name, nil)
}
