package pxe

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

var (
	_ providers.Reinstaller = (*Provider)(nil)
	_ remoteReinstaller     = (*client.Client)(nil)
	_ localReinstaller      = (*registrar.Local)(nil)
)

// remoteReinstaller is a [Booter] that re-arms an installed registration
// and boots its machine in one call: node-provisioner's API.
type remoteReinstaller interface {
	Booter
	Reinstall(ctx context.Context, name string, req apitype.ReinstallRequest) (apitype.ReinstallReply, error)
}

// localReinstaller re-arms an installed registration of a state folder
// ([LocalRegistry]).
type localReinstaller interface {
	Reinstall(ctx context.Context, name string, req apitype.ReinstallRequest) (registry.Registration, error)
}

// Reinstall re-arms each of hosts' installed registrations as a new
// one-shot with a new root password, keeping their data pools unless
// o.WipeData. Through node-provisioner's API a
// machine with a BMC is booted too (PXE once, power cycle), and with
// o.Wait the window's events are followed, as [Provider.Start] does, until
// each is installed again or ctx ends. A local state folder's
// registrations are re-armed only: their machines install at their next
// netboot, or boot from virtual media (node-provisioner boot NAME drives
// a BMC from the site's host), and there are no events to follow.
//
// Errors: [ErrNoBootControl] for o.Wait on a local state folder (before
// anything is re-armed); a host with no installed registration wraps
// registry.ErrNotFound.
func (pv *Provider) Reinstall(ctx context.Context, at providers.Location, hosts []string, o providers.ReinstallOptions, fn func(providers.Progress)) ([]string, error) {
	req := apitype.ReinstallRequest{WipeData: o.WipeData}
	if at.Remote == nil {
		if o.Wait {
			return hosts, fmt.Errorf("%w: following a reinstall needs node-provisioner's API (infrastructure.provisioner_url), whose window reports the install", ErrNoBootControl)
		}
		return pv.reinstallLocal(ctx, at, hosts, req, fn)
	}
	b, err := pv.booter(ctx, at)
	if err != nil {
		return hosts, err
	}
	rb, ok := b.(remoteReinstaller)
	if !ok {
		return hosts, fmt.Errorf("%w: the registry of %s cannot reinstall machines", ErrNoBootControl, at)
	}
	return run(ctx, b, hosts, o.Wait, fn, func(ctx context.Context, h string) (string, error) {
		res, err := rb.Reinstall(ctx, h, req)
		if err != nil {
			return "", err
		}
		if res.Boot == nil {
			return reArmed + "; no BMC: netboot its machine", nil
		}
		return reArmed + "; " + bootDetail(*res.Boot), nil
	})
}

const reArmed = "re-armed for one install with a new root password"

// reinstallLocal re-arms hosts in a state folder and says how each
// machine boots: a netboot, or its BMC's virtual media (the
// registration's boot method, else the folder's site.json's).
func (pv *Provider) reinstallLocal(ctx context.Context, at providers.Location, hosts []string, req apitype.ReinstallRequest, fn func(providers.Progress)) ([]string, error) {
	reg, err := pv.open(ctx, at, nil)
	if err != nil {
		return hosts, err
	}
	lr, ok := reg.(localReinstaller)
	if !ok {
		return hosts, fmt.Errorf("%w: the registry of %s cannot reinstall machines", ErrNoBootControl, at)
	}
	site, err := registry.LoadSiteIfExists(filepath.Join(at.Dir, registry.SiteFileName))
	if err != nil {
		return hosts, err
	}
	var errs []error
	for _, h := range hosts {
		r, err := lr.Reinstall(ctx, h, req)
		if err != nil {
			errs = append(errs, err)
			fn(providers.Progress{Hostname: h, Step: events.Failed, Time: time.Now(), Err: err})
			continue
		}
		detail := reArmed + "; netboot its machine"
		if m, _ := site.BootOf(r); m == registry.BootVirtualMedia {
			detail = reArmed + "; node-provisioner boot " + h + " boots it from its BMC's virtual media"
		} else if r.BMC != nil {
			detail += " (node-provisioner boot " + h + " boots it through its BMC)"
		}
		fn(providers.Progress{Hostname: h, Step: events.Started, Time: time.Now(), Detail: detail})
	}
	return hosts, errors.Join(errs...)
}
