package daemon

import (
	"context"
	"log/slog"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// Serve runs one window on this host in the foreground, as the daemon
// runs each of its windows: it answers from node-provisioner's backend
// over stores (regbackend.Open, with site over site.json's and
// cfg.Discover), takes the discovery inbox when cfg.Discover, and
// serves cfg (pxe.New, then Serve) until the window closes. It returns
// Serve's error (pxe.ErrWindowExpired when the TTL ran out); a setting
// that is not valid is a *pxe.ConfigError, as pxe.New's.
func Serve(ctx context.Context, stores *store.Stores, cfg pxe.Config, site registry.Site, log *slog.Logger) error {
	cfg, b, err := withBackend(ctx, stores, cfg, site, log)
	if err != nil {
		return err
	}
	defer b.Close()
	srv, err := pxe.New(cfg)
	if err != nil {
		return err
	}
	stop := ejectWhileOpen(ctx, newBMCs(stores, stores.Events(), log))
	defer stop()
	return srv.Serve(ctx)
}

// withBackend gives cfg node-provisioner's backend over stores (with
// site over site.json's) and, for a discovery window, their inbox and
// the enrolment by the site's rules: the
// wiring of every window this package runs. The caller closes the
// backend.
func withBackend(ctx context.Context, stores *store.Stores, cfg pxe.Config, site registry.Site, log *slog.Logger) (pxe.Config, *regbackend.Backend, error) {
	b, err := regbackend.Open(ctx, stores, regbackend.Options{StateDir: cfg.StateDir, Site: site, Discover: cfg.Discover, Logger: log})
	if err != nil {
		return cfg, nil, err
	}
	cfg.Backend = b
	if cfg.Discover {
		if cfg.Inbox, err = stores.Discovered(); err == nil {
			cfg.Enrol, cfg.EnrolPreview, err = enroller(ctx, stores, cfg.StateDir, site, log)
		}
		if err != nil {
			b.Close()
			return cfg, nil, err
		}
	}
	return cfg, b, nil
}
