package power

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/bmc/ipmi"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// Errors of [Node] and [Boot] besides the BMC's own ([bmc.ErrUnreachable],
// [bmc.ErrAuthRefused], [bmc.ErrBMC]).
var (
	// ErrNoBMC: the registration has no BMC.
	ErrNoBMC = errors.New("no BMC registered")
	// ErrNoStore: a Request lacks a store it needs.
	ErrNoStore = errors.New("no store given")
	// ErrBootRefused: a boot was refused because the window is closed or
	// the registration is not pending (consumed or installed), so an
	// installed machine is never reinstalled by accident.
	ErrBootRefused = errors.New("boot refused")
)

// Action is what [Node] asks of a BMC.
type Action string

// Actions.
const (
	Status Action = "status"
	On     Action = "on"
	Off    Action = "off"
	Cycle  Action = "cycle"
)

// Open returns the driver of endpoint e: IPMI (package ipmi) or
// Redfish. It does not contact the BMC.
func Open(e bmc.Endpoint, c bmc.Credentials, o bmc.Options) (bmc.Controller, error) {
	return bmc.Open(e, c, o, bmc.Drivers{IPMI: ipmi.New})
}

// Request names a node and the stores of its registration, its BMC
// password, the window and the event log: the process's own, which it
// opened once (pxe/store). Power control opens no store.
type Request struct {
	// Registrations and Secrets hold the node's registration and its
	// BMC password. Required ([ErrNoStore]).
	Registrations registry.Registrations
	Secrets       secret.Store
	// SiteSecrets hold the passwords that BMCs name by a site secret
	// (registry.BMC.Secret: an enrolment rule's), read at each use.
	// Required for those ([ErrNoStore]).
	SiteSecrets secret.Site
	// Window is the window state Boot checks. Required by Boot.
	Window window.Store
	// Name is the node.
	Name string
	// Options tune the BMC driver (timeouts, retries); the registration
	// sets the protocol's settings.
	Options bmc.Options
	// Events receives the BMC events, and tells an installed node from
	// a consumed one: the process's one event store of the state folder
	// (pxe/store's Events). Nil records nothing.
	Events events.Store
	// Site holds the site's settings: its boot method applies to a
	// registration that names none ([registry.Site.BootOf]).
	Site registry.Site
	// Media serves the installer's media to BMCs, for registrations
	// whose boot method is virtual media; nil: such a boot is refused
	// ([ErrNoMedia]).
	Media Media
	// Logger gets what was done; nil discards it.
	Logger *slog.Logger
}

// Node runs a power action through node name's BMC, for a pending or
// a consumed registration alike, and returns the power state after it
// (for status, the state). On, off and cycle are events on the timeline.
func Node(ctx context.Context, req Request, action Action) (bmc.Power, error) {
	if !slices.Contains([]Action{Status, On, Off, Cycle}, action) {
		return "", fmt.Errorf("power %s: want status, on, off or cycle", action)
	}
	r, _, err := findRegistration(ctx, req)
	if err != nil {
		return "", err
	}
	c, err := openBMC(ctx, req, r)
	if err != nil {
		return "", err
	}
	defer c.Close(context.WithoutCancel(ctx))
	if action == Status {
		p, err := c.PowerStatus(ctx)
		if err != nil {
			return "", fmt.Errorf("%s: %w", req.Name, err)
		}
		return p, nil
	}
	f := map[Action]func(context.Context) error{On: c.PowerOn, Off: c.PowerOff, Cycle: c.PowerCycle}[action]
	what := fmt.Sprintf("power %s via %s", action, c.Protocol())
	err = f(ctx)
	record(req, what, err)
	if err != nil {
		return "", fmt.Errorf("%s: %w", req.Name, err)
	}
	p, err := c.PowerStatus(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %w", req.Name, err)
	}
	return p, nil
}

// BootResult says what [Boot] did.
type BootResult struct {
	// Protocol is the BMC's: "ipmi" or "redfish".
	Protocol string
	// Mode is the one-time boot's firmware mode.
	Mode bmc.BootMode
	// Was is the power state before; Cycled says the machine was on and
	// was power-cycled rather than powered on.
	Was    bmc.Power
	Cycled bool
	// Device is what the machine boots once: [DevicePXE] or, for a
	// virtual-media registration, [DeviceCD].
	Device string
}

// Boot boots node name into the installer: it sets the next boot to
// PXE, once, and powers the machine on, or cycles it when it is on. A
// registration whose boot method is virtual media gets its medium
// from req.Media inserted in its BMC's virtual CD and boots that once
// instead ([Eject] takes it back). It
// refuses ([ErrBootRefused]) unless the provisioning window is open and
// the registration is pending. Each step is an event on the timeline.
func Boot(ctx context.Context, req Request) (BootResult, error) {
	var res BootResult
	if req.Window == nil {
		return res, fmt.Errorf("boot %s: %w: the window state", req.Name, ErrNoStore)
	}
	w, err := req.Window.Read(ctx)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	if err != nil || !w.Open(time.Now()) {
		return res, fmt.Errorf("boot %s: %w: the provisioning window is closed (open it first)", req.Name, ErrBootRefused)
	}
	r, pending, err := findRegistration(ctx, req)
	if err != nil {
		return res, err
	}
	if !pending {
		state := "consumed (its answer was served)"
		if inst, err := regbackend.InstalledIn(ctx, req.Events); err == nil {
			if _, ok := inst[req.Name]; ok {
				state = "installed"
			}
		}
		return res, fmt.Errorf("boot %s: %w: the registration is %s, not pending; re-register or rearm it to install this machine again", req.Name, ErrBootRefused, state)
	}
	mode, err := bmc.ParseBootMode(r.BMC.BootMode)
	if err != nil {
		return res, err
	}
	c, err := openBMC(ctx, req, r)
	if err != nil {
		return res, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	res.Protocol, res.Mode = c.Protocol(), mode
	if res.Was, err = c.PowerStatus(ctx); err != nil {
		record(req, "power status via "+c.Protocol(), err)
		return res, fmt.Errorf("%s: %w", req.Name, err)
	}
	if m, _ := req.Site.BootOf(r); m == registry.BootVirtualMedia {
		return res, bootFromMedia(ctx, req, r, c, mode, &res)
	}
	err = c.SetNextBootPXE(ctx, mode)
	record(req, fmt.Sprintf("next boot PXE (%s, once) via %s", mode, c.Protocol()), err)
	if err != nil {
		return res, fmt.Errorf("%s: %w", req.Name, err)
	}
	res.Device = DevicePXE
	if err := powerUp(ctx, req, c, &res); err != nil {
		return res, fmt.Errorf("%s: %w", req.Name, err)
	}
	return res, nil
}

// powerUp powers the machine on, or cycles it when res.Was is not off.
func powerUp(ctx context.Context, req Request, c bmc.Controller, res *BootResult) error {
	what, power := "power on", c.PowerOn
	if res.Was != bmc.PowerOff {
		what, power, res.Cycled = "power cycle", c.PowerCycle, true
	}
	err := power(ctx)
	record(req, what+" via "+c.Protocol(), err)
	return err
}

// findRegistration returns node name's registration, pending or else
// consumed, with a BMC.
func findRegistration(ctx context.Context, req Request) (registry.Registration, bool, error) {
	reg, err := req.registrations()
	if err != nil {
		return registry.Registration{}, false, err
	}
	r, err := reg.Get(ctx, req.Name)
	pending := err == nil
	if errors.Is(err, registry.ErrNotFound) {
		consumed, cerr := reg.Consumed(ctx)
		if cerr != nil {
			return r, false, cerr
		}
		i := slices.IndexFunc(consumed, func(c registry.Registration) bool { return c.Name == req.Name })
		if i < 0 {
			return r, false, err
		}
		r, err = consumed[i], nil
	}
	if err != nil {
		return r, false, err
	}
	if r.BMC == nil {
		return r, pending, fmt.Errorf("%s: %w (register it with its BMC)", req.Name, ErrNoBMC)
	}
	return r, pending, nil
}

// registrations returns req's registrations.
func (req Request) registrations() (registry.Registrations, error) {
	if req.Registrations == nil {
		return nil, fmt.Errorf("%s: %w: the registrations", req.Name, ErrNoStore)
	}
	return req.Registrations, nil
}

// secrets returns req's secrets.
func (req Request) secrets() (secret.Store, error) {
	if req.Secrets == nil {
		return nil, fmt.Errorf("%s: %w: the secrets", req.Name, ErrNoStore)
	}
	return req.Secrets, nil
}

func openBMC(ctx context.Context, req Request, r registry.Registration) (bmc.Controller, error) {
	secrets, err := req.secrets()
	if err != nil {
		return nil, err
	}
	var pw string
	switch {
	case r.BMC.Secret == "":
		pw, err = secrets.ReadBMCPassword(ctx, r.Name)
	case req.SiteSecrets == nil:
		err = fmt.Errorf("%s: %w: the site secrets (its BMC password is site secret %s)", req.Name, ErrNoStore, r.BMC.Secret)
	default:
		pw, err = req.SiteSecrets.ReadSiteSecret(ctx, r.BMC.Secret)
	}
	if err != nil {
		return nil, err
	}
	o := req.Options
	if o.Logger == nil {
		o.Logger = req.Logger
	}
	e, err := bmc.Parse(r.BMC.URL)
	if err != nil {
		return nil, err
	}
	return Open(e, bmc.Credentials{User: r.BMC.User, Password: pw}, r.BMC.Options(o))
}

// record appends a BMC event (what was done, and the error's words when
// it failed) to the event log and the logger.
func record(req Request, what string, err error) {
	log := req.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := backend.Event{Time: time.Now().UTC(), Kind: events.BMC, Node: req.Name, Detail: what}
	if err != nil {
		e.Detail = what + " failed: " + err.Error()
		log.Info("BMC action failed", "node", req.Name, "action", what, "err", err) // the caller reports err
	} else {
		log.Info("BMC action", "node", req.Name, "action", what)
	}
	if req.Events == nil {
		log.Warn("no event store: the BMC action is not in the event log", "node", req.Name)
		return
	}
	if lerr := req.Events.Append(context.Background(), e); lerr != nil {
		log.Warn("event log", "err", lerr)
	}
}
