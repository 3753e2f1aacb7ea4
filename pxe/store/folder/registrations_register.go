package folder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// Register writes a registration as <name>.json, replacing one of the
// same name (a warning is logged; Previous holds it). The MACs are
// normalised and deduplicated, Created is set to now when zero and
// Consumed is cleared. A name whose earlier registration was consumed
// becomes pending again; its .consumed record stays until this one is
// consumed in turn.
//
// A pin (MAC, serial, UUID) another pending registration holds is refused
// with a [*registry.PinTakenError] (wrapping [registry.ErrPinTaken] and
// [registry.ErrInvalidRegistration]), unless opts.Replace moves it. Errors from
// validation wrap the sentinels listed at [registry.ErrInvalidRegistration].
func (g *Registrations) Register(ctx context.Context, r registry.Registration, opts registry.RegisterOptions) (registry.RegisterResult, error) {
	var res registry.RegisterResult
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("put registration %s: %w", r.Name, err)
	}
	r, err := registry.Prepare(r)
	if err != nil {
		return res, err
	}
	// The answer it would get with the site's settings so far (the state
	// folder's site.json, beside the registrations folder; serve's flags
	// are checked again when the window opens).
	if site, err := registry.LoadSiteIfExists(filepath.Join(filepath.Dir(g.dir), registry.SiteFileName)); err == nil {
		if err := site.CheckRegistration(r); err != nil {
			return res, fmt.Errorf("%w: %s: %w", registry.ErrInvalidRegistration, r.Name, err)
		}
	}
	data, err := registry.EncodeRegistration(r)
	if err != nil {
		return res, err
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
	if i := slices.IndexFunc(pending, func(p registry.Registration) bool { return p.Name == r.Name }); i >= 0 {
		prev := pending[i]
		res.Previous = &prev
	}
	if res.Moved, err = g.takePins(r, pending, opts.Replace); err != nil {
		return res, err
	}
	path := g.pendingPath(r.Name)
	if res.Previous == nil {
		if _, err := os.Lstat(path); err == nil { // there, but unreadable
			res.Previous = &registry.Registration{Name: r.Name}
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
// pending registrations hold or, with replace, takes them from those
// ([registry.TakePins]), removing one left pinning nothing.
func (g *Registrations) takePins(r registry.Registration, pending []registry.Registration, replace bool) ([]registry.PinMove, error) {
	takes, err := registry.TakePins(r, pending, replace)
	if err != nil {
		return nil, err
	}
	var moved []registry.PinMove
	for _, t := range takes {
		removed := t.Moved[0].Removed
		if removed {
			err = os.Remove(g.pendingPath(t.Left.Name))
		} else {
			var data []byte
			if data, err = registry.EncodeRegistration(t.Left); err == nil {
				err = atomicfile.WriteFile(g.pendingPath(t.Left.Name), data, 0o600)
			}
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return moved, fmt.Errorf("move pins from registration %s: %w", t.Left.Name, err)
		}
		for _, m := range t.Moved {
			moved = append(moved, m)
			g.log.Warn("pin moved", "pin", m.Pin.String(), "from", m.From, "to", r.Name, "removed", removed)
		}
	}
	return moved, nil
}
