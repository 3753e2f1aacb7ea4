package daemon

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/vmedia"
)

// bmcs is the API's [api.Power] over package power: the registrations
// and event log of the state folder, the BMC passwords of the secrets
// folder.
type bmcs struct {
	stores *store.Stores
	events events.Store
	// media serves the installer's media to BMCs for virtual-media
	// boots; nil refuses them (power.ErrNoMedia).
	media power.Media
	log   *slog.Logger
}

var _ api.Power = (*bmcs)(nil)

// newBMCs returns the power control over stores, with events as its
// event log.
// Its virtual media are the state folder's (vmedia.Dir), served by the
// window open on it.
func newBMCs(stores *store.Stores, events events.Store, log *slog.Logger) *bmcs {
	b := &bmcs{stores: stores, events: events, log: log}
	b.media = vmedia.Dir{StateDir: stores.Dir()}
	return b
}

func (b *bmcs) req(ctx context.Context, name string) (power.Request, error) {
	secrets, err := b.stores.Secrets(ctx)
	if err != nil {
		return power.Request{}, err
	}
	site, err := b.site()
	if err != nil {
		return power.Request{}, err
	}
	siteSecrets, err := b.stores.SiteSecrets(ctx)
	if err != nil {
		return power.Request{}, err
	}
	return power.Request{Registrations: b.stores.Registrations(), Secrets: secrets, SiteSecrets: siteSecrets, Window: b.stores.Window(), Name: name, Events: b.events, Site: site, Media: b.media, Logger: b.log}, nil
}

// site reads the state folder's site settings (none when it has no
// site.json): their boot method applies to registrations that name none.
func (b *bmcs) site() (registry.Site, error) {
	return registry.LoadSiteIfExists(filepath.Join(b.stores.Dir(), registry.SiteFileName))
}

// classify marks err for the API's status codes.
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, power.ErrNoBMC), errors.Is(err, power.ErrBootRefused):
		return &marked{kind: api.ErrPowerRefused, err: err}
	case errors.Is(err, bmc.ErrUnreachable), errors.Is(err, bmc.ErrAuthRefused), errors.Is(err, bmc.ErrBMC):
		return &marked{kind: api.ErrBMCFailed, err: err}
	}
	return err
}

// marked is err matching kind too, in err's words only: the API's reply
// says what the command says on the provisioner's host.
type marked struct{ kind, err error }

func (m *marked) Error() string   { return m.err.Error() }
func (m *marked) Unwrap() []error { return []error{m.kind, m.err} }

func (b *bmcs) Power(ctx context.Context, name, action string) (string, error) {
	req, err := b.req(ctx, name)
	if err != nil {
		return "", err
	}
	p, err := power.Node(ctx, req, power.Action(action))
	return string(p), classify(err)
}

func (b *bmcs) Boot(ctx context.Context, name string) (api.BootReply, error) {
	req, err := b.req(ctx, name)
	if err != nil {
		return api.BootReply{}, err
	}
	res, err := power.Boot(ctx, req)
	if err != nil {
		return api.BootReply{}, classify(err)
	}
	return bootReply(res), nil
}

// bootReply is res as the API says it.
func bootReply(res power.BootResult) api.BootReply {
	return api.BootReply{Protocol: res.Protocol, Mode: string(res.Mode), Was: string(res.Was), Cycled: res.Cycled, Device: res.Device}
}
