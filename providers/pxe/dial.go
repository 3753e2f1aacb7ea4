package pxe

import (
	"context"
	"errors"
	"log/slog"

	"github.com/plasmactl/plasma-node/providers"
)

// defaultDial opens node-provisioner's management API.
func defaultDial(_ context.Context, r providers.Remote, _ *slog.Logger) (Registry, error) {
	return nil, errors.New("node-provisioner API at " + r.URL + ": no client yet")
}
