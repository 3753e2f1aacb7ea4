package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
)

// RegisterOptions tunes [Store.Register]. The zero value refuses a pin
// another pending registration holds.
type RegisterOptions struct {
	// Replace moves pins: a MAC, serial or UUID another pending
	// registration holds is taken from it. A registration left pinning
	// nothing is removed, as it could otherwise answer any machine that is
	// alone in the window.
	Replace bool
}

// RegisterResult is what [Store.Register] changed besides writing the
// registration.
type RegisterResult struct {
	// Previous is the pending registration of the same name it replaced,
	// nil for none; see [Changes] for what differs.
	Previous *Registration
	// Moved are the pins taken from other registrations (Replace).
	Moved []PinMove
}

// PinMove is a pin taken from another pending registration.
type PinMove struct {
	// Pin is the pin taken.
	Pin Pin
	// From is the registration that held it.
	From string
	// Removed says From was left pinning nothing and was removed.
	Removed bool
}

// Register writes a registration as <name>.json, replacing one of the
// same name (a warning is logged; Previous holds it). The MACs are
// normalised and deduplicated, Created is set to now when zero and
// Consumed is cleared. A name whose earlier registration was consumed
// becomes pending again; its .consumed record stays until this one is
// consumed in turn.
//
// A pin (MAC, serial, UUID) another pending registration holds is refused
// with a [*PinTakenError] (wrapping [ErrPinTaken] and
// [ErrInvalidRegistration]), unless opts.Replace moves it. Errors from
// validation wrap the sentinels listed at [ErrInvalidRegistration].
func (g *Store) Register(ctx context.Context, r Registration, opts RegisterOptions) (RegisterResult, error) {
	var res RegisterResult
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("put registration %s: %w", r.Name, err)
	}
	r, err := r.normalize()
	if err != nil {
		return res, err
	}
	if r.Created.IsZero() {
		r.Created = time.Now().UTC().Truncate(time.Second)
	}
	r.Consumed = nil
	// The host name rule first: it is the one a new registration's name
	// is told (Validate's looser one is for TAPPaaS's older files).
	if err := ValidateHostname(r.Name); err != nil {
		return res, err
	}
	if err := r.Validate(); err != nil {
		return res, err
	}
	// The answer it would get with the site's settings so far (site.json;
	// serve's flags are checked again when the window opens).
	if site, err := LoadSiteIfExists(filepath.Join(g.dir, SiteFileName)); err == nil {
		if err := site.CheckRegistration(r); err != nil {
			return res, fmt.Errorf("%w: %s: %w", ErrInvalidRegistration, r.Name, err)
		}
	}
	data, err := encodeRegistration(r)
	if err != nil {
		return res, err
	}
	if len(data) > MaxRegistrationSize {
		return res, invalid(ErrInvalidRegistration, "registration %s is %d bytes encoded, more than %d", r.Name, len(data), MaxRegistrationSize)
	}
	unlock, err := g.lock(ctx, "node-provisioner register "+r.Name)
	if err != nil {
		return res, err
	}
	defer unlock()
	pending, _, err := g.scan(ctx, pendingSuffix)
	if err != nil {
		return res, err
	}
	if i := slices.IndexFunc(pending, func(p Registration) bool { return p.Name == r.Name }); i >= 0 {
		prev := pending[i]
		res.Previous = &prev
	}
	if res.Moved, err = g.takePins(r, pending, opts.Replace); err != nil {
		return res, err
	}
	path := g.pendingPath(r.Name)
	if res.Previous == nil {
		if _, err := os.Lstat(path); err == nil { // there, but unreadable
			res.Previous = &Registration{Name: r.Name}
		}
	}
	if err := atomicfile.WriteFile(path, data, 0o600); err != nil {
		return res, fmt.Errorf("put registration %s: %w", r.Name, err)
	}
	if res.Previous != nil {
		g.log.Warn("registration replaced", "node", r.Name, "file", path)
	} else {
		g.log.Info("registration written", "node", r.Name, "file", path)
	}
	if _, err := os.Lstat(g.consumedPath(r.Name)); err == nil {
		g.log.Info("registration was consumed before and is pending again", "node", r.Name)
	}
	return res, nil
}

// takePins runs with the lock held: it refuses r's pins that other
// pending registrations hold or, with replace, takes them from those,
// removing one left pinning nothing.
func (g *Store) takePins(r Registration, pending []Registration, replace bool) ([]PinMove, error) {
	var moved []PinMove
	for _, o := range pending {
		if o.Name == r.Name {
			continue
		}
		var taken []Pin
		for _, p := range r.Pins() {
			if slices.ContainsFunc(o.Pins(), p.same) {
				if !replace {
					return nil, &PinTakenError{Name: r.Name, Pin: p, Holder: o.Name}
				}
				taken = append(taken, p)
			}
		}
		if len(taken) == 0 {
			continue
		}
		left := withoutPins(o, taken)
		removed := !left.Pinned()
		var err error
		if removed {
			err = os.Remove(g.pendingPath(o.Name))
		} else {
			var data []byte
			if data, err = encodeRegistration(left); err == nil {
				err = atomicfile.WriteFile(g.pendingPath(o.Name), data, 0o600)
			}
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return moved, fmt.Errorf("move pins from registration %s: %w", o.Name, err)
		}
		for _, p := range taken {
			moved = append(moved, PinMove{Pin: p, From: o.Name, Removed: removed})
			g.log.Warn("pin moved", "pin", p.String(), "from", o.Name, "to", r.Name, "removed", removed)
		}
	}
	return moved, nil
}

// withoutPins returns r without the pins given.
func withoutPins(r Registration, pins []Pin) Registration {
	r.MACs = slices.DeleteFunc(slices.Clone(r.MACs), func(m string) bool {
		return slices.ContainsFunc(pins, Pin{PinMAC, m}.same)
	})
	if slices.ContainsFunc(pins, Pin{PinSerial, r.Serial}.same) {
		r.Serial = ""
	}
	if slices.ContainsFunc(pins, Pin{PinUUID, r.UUID}.same) {
		r.UUID = ""
	}
	return r
}
