package daemon

import (
	"context"
	"errors"
	"log/slog"

	"github.com/plasmactl/plasma-node/answer/registry"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/power"
)

// bmcs is the API's [api.Power] over package power: the registrations
// and event log of the state folder, the BMC passwords of the secrets
// folder.
type bmcs struct {
	stateDir, secretsDir string
	events               events.Store
	log                  *slog.Logger
}

var _ api.Power = (*bmcs)(nil)

func (b *bmcs) req(name string) power.Request {
	return power.Request{StateDir: b.stateDir, SecretsDir: b.secretsDir, Name: name, Events: b.events, Logger: b.log}
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
	p, err := power.Node(ctx, b.req(name), power.Action(action))
	return string(p), classify(err)
}

func (b *bmcs) Boot(ctx context.Context, name string) (api.BootReply, error) {
	res, err := power.Boot(ctx, b.req(name))
	if err != nil {
		return api.BootReply{}, classify(err)
	}
	return api.BootReply{Protocol: res.Protocol, Mode: string(res.Mode), Was: string(res.Was), Cycled: res.Cycled}, nil
}

func (b *bmcs) SetPassword(name, password string) error {
	s, err := registry.OpenSecretStore(b.secretsDir)
	if err != nil {
		return err
	}
	_, err = s.WriteBMCPassword(name, password)
	return err
}
