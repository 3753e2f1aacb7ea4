package pxe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/plasmactl/plasma-node/answer/registry"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/bmc"
)

// Errors of [PowerNode] and [BootNode] besides the BMC's own ([bmc.ErrUnreachable],
// [bmc.ErrAuthRefused], [bmc.ErrBMC]).
var (
	// ErrNoBMC: the registration has no BMC.
	ErrNoBMC = errors.New("no BMC registered")
	// ErrBootRefused: a boot was refused because the window is closed or
	// the registration is not pending (consumed or installed), so an
	// installed machine is never reinstalled by accident.
	ErrBootRefused = errors.New("boot refused")
)

// PowerAction is what [PowerNode] asks of a BMC.
type PowerAction string

// Power actions.
const (
	PowerStatus PowerAction = "status"
	PowerOn     PowerAction = "on"
	PowerOff    PowerAction = "off"
	PowerCycle  PowerAction = "cycle"
)

// BMCRequest names a node and where its registration, BMC password and
// event log are.
type BMCRequest struct {
	// StateDir holds the registrations and the event log.
	StateDir string
	// SecretsDir holds the BMC password (<name>.bmc.pw).
	SecretsDir string
	// Name is the node.
	Name string
	// Options tune the BMC driver (timeouts, retries); the registration
	// sets the protocol's settings.
	Options bmc.Options
	// Logger gets what was done; nil discards it.
	Logger *slog.Logger
}

// PowerNode runs a power action through node name's BMC, for a pending or
// a consumed registration alike, and returns the power state after it
// (for status, the state). On, off and cycle are events on the timeline.
func PowerNode(ctx context.Context, req BMCRequest, action PowerAction) (bmc.Power, error) {
	if !slices.Contains([]PowerAction{PowerStatus, PowerOn, PowerOff, PowerCycle}, action) {
		return "", fmt.Errorf("power %s: want status, on, off or cycle", action)
	}
	r, _, err := findRegistration(ctx, req)
	if err != nil {
		return "", err
	}
	c, err := openBMC(req, r)
	if err != nil {
		return "", err
	}
	defer c.Close(context.WithoutCancel(ctx))
	if action == PowerStatus {
		p, err := c.PowerStatus(ctx)
		if err != nil {
			return "", fmt.Errorf("%s: %w", req.Name, err)
		}
		return p, nil
	}
	f := map[PowerAction]func(context.Context) error{PowerOn: c.PowerOn, PowerOff: c.PowerOff, PowerCycle: c.PowerCycle}[action]
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

// BootResult says what [BootNode] did.
type BootResult struct {
	// Protocol is the BMC's: "ipmi" or "redfish".
	Protocol string
	// Mode is the one-time boot's firmware mode.
	Mode bmc.BootMode
	// Was is the power state before; Cycled says the machine was on and
	// was power-cycled rather than powered on.
	Was    bmc.Power
	Cycled bool
}

// BootNode boots node name into the installer: it sets the next boot to
// PXE, once, and powers the machine on, or cycles it when it is on. It
// refuses ([ErrBootRefused]) unless the provisioning window is open and
// the registration is pending. Each step is an event on the timeline.
func BootNode(ctx context.Context, req BMCRequest) (BootResult, error) {
	var res BootResult
	w, err := ReadWindow(req.StateDir)
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
		if inst, err := registry.Installed(ctx, filepath.Join(req.StateDir, registry.EventsFileName)); err == nil {
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
	c, err := openBMC(req, r)
	if err != nil {
		return res, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	res.Protocol, res.Mode = c.Protocol(), mode
	if res.Was, err = c.PowerStatus(ctx); err != nil {
		record(req, "power status via "+c.Protocol(), err)
		return res, fmt.Errorf("%s: %w", req.Name, err)
	}
	err = c.SetNextBootPXE(ctx, mode)
	record(req, fmt.Sprintf("next boot PXE (%s, once) via %s", mode, c.Protocol()), err)
	if err != nil {
		return res, fmt.Errorf("%s: %w", req.Name, err)
	}
	what, power := "power on", c.PowerOn
	if res.Was != bmc.PowerOff {
		what, power, res.Cycled = "power cycle", c.PowerCycle, true
	}
	err = power(ctx)
	record(req, what+" via "+c.Protocol(), err)
	if err != nil {
		return res, fmt.Errorf("%s: %w", req.Name, err)
	}
	return res, nil
}

// findRegistration returns node name's registration, pending or else
// consumed, with a BMC.
func findRegistration(ctx context.Context, req BMCRequest) (registry.Registration, bool, error) {
	reg, err := registry.Open(req.StateDir, req.Logger)
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

func openBMC(req BMCRequest, r registry.Registration) (bmc.Controller, error) {
	secrets, err := registry.OpenSecretStore(req.SecretsDir)
	if err != nil {
		return nil, err
	}
	pw, err := secrets.ReadBMCPassword(r.Name)
	if err != nil {
		return nil, err
	}
	o := req.Options
	if o.Logger == nil {
		o.Logger = req.Logger
	}
	return r.BMC.Open(pw, o)
}

// record appends a BMC event (what was done, and the error's words when
// it failed) to the event log and the logger.
func record(req BMCRequest, what string, err error) {
	log := req.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := backend.Event{Time: time.Now().UTC(), Kind: backend.EventBMC, Node: req.Name, Detail: what}
	if err != nil {
		e.Detail = what + " failed: " + err.Error()
		log.Info("BMC action failed", "node", req.Name, "action", what, "err", err) // the caller reports err
	} else {
		log.Info("BMC action", "node", req.Name, "action", what)
	}
	l, lerr := registry.OpenEventLog(filepath.Join(req.StateDir, registry.EventsFileName))
	if lerr != nil {
		log.Warn("event log", "err", lerr)
		return
	}
	defer l.Close()
	if lerr := l.Append(e); lerr != nil {
		log.Warn("event log", "err", lerr)
	}
}

// ForgetBMC removes node name's BMC password once no registration of
// that name, pending or consumed, names a BMC (after an unregister).
func ForgetBMC(ctx context.Context, req BMCRequest) error {
	_, _, err := findRegistration(ctx, req)
	if err == nil {
		return nil // still used
	}
	if !errors.Is(err, registry.ErrNotFound) && !errors.Is(err, ErrNoBMC) {
		return err
	}
	secrets, err := registry.OpenSecretStore(req.SecretsDir)
	if err != nil {
		return err
	}
	return secrets.RemoveBMCPassword(req.Name)
}
