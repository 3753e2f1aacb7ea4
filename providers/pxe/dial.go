package pxe

import (
	"context"
	"log/slog"

	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/client"
)

// defaultDial opens node-provisioner's management API with its Go
// client; it does no I/O (the first call does).
func defaultDial(_ context.Context, r providers.Remote, log *slog.Logger) (Registry, error) {
	c, err := client.New(client.Options{URL: r.URL, Token: r.Token, Fingerprint: r.Fingerprint, Logger: log})
	if err != nil {
		return nil, err
	}
	return c, nil
}

var _ Registry = (*client.Client)(nil)
