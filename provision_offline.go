package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// offlineReason says why tofu's own plan of plat cannot be made here
// (the provider's or the state backend's credentials are not set, no
// tofu is found); "" when it can. A state setting that is wrong is an
// error, as it is for a run.
func (p *Project) offlineReason(ctx context.Context, plat *nodes.Platform, prov providers.Provider, o TofuOptions) (string, error) {
	getenv := o.getenv()
	if _, err := prov.Credentials(plat, getenv); err != nil {
		return fmt.Sprintf("tofu's own plan needs the provider's credentials (%v)", err), nil
	}
	if _, _, err := stateBackend(plat, getenv); errors.Is(err, providers.ErrNoCredentials) {
		return fmt.Sprintf("tofu's own plan needs the state backend's credentials (%v)", err), nil
	} else if err != nil {
		return "", err
	}
	if _, err := tofu.Find(ctx, tofu.FindOptions{Path: o.TofuPath, Logger: p.log}); err != nil {
		return fmt.Sprintf("tofu's own plan needs tofu (%v)", err), nil
	}
	return "", nil
}

// getenv is Getenv, or os.Getenv when it is nil.
func (o TofuOptions) getenv() func(string) string {
	if o.Getenv == nil {
		return os.Getenv
	}
	return o.Getenv
}

// offline is a dry run's provision plan made from the files alone, why
// saying why it is not the provider's or tofu's own; tofuMade says that
// tofu makes the provider's servers.
func (p *Project) offline(o ProvisionOptions, in providers.Input, plat *nodes.Platform, existing []*nodes.Node, res ProvisionResult, why string, tofuMade bool) (ProvisionResult, error) {
	pl, err := offlinePlan(in, plat.Pools, existing, tofuMade)
	if err != nil {
		return res, fmt.Errorf("plan platform %s: %w", o.Platform, err)
	}
	pl.note("%s", why)
	pl.note("this plan is derived from the pools and the node files, the last known state")
	if tofuMade {
		pl.note("tofu's own plan may add updates the files do not show, and says which are destructive")
	}
	if st := plat.Infrastructure.State.Backend; st != "" && st != tofu.BackendLocal {
		pl.note("the state kept in the %s backend was not read: servers only it holds are not shown", st)
	}
	res.Plan = pl
	p.log.Info("offline plan", "platform", o.Platform, "reason", why)
	return res, nil
}

// provisionPlan is the [Plan] of a classified provision plan sum over
// in: the pools it changes in platform.yaml (old being the pools there),
// then its server changes; a [providers.Direct] provider's, which lists
// no adoptions, gets one for each adopted server it keeps.
func provisionPlan(src PlanSource, sum tofu.Summary, in providers.Input, old map[string]nodes.Pool, existing []*nodes.Node, dryRun bool) Plan {
	if src == SourceProvider {
		deleted := map[string]bool{}
		for _, c := range sum.Deletes {
			deleted[c.ImportID] = true
		}
		sum.Imports = nil
		slots, _ := providers.Slots(in)
		for _, s := range slots {
			if s.Adopted() && !deleted[s.ServerID] {
				sum.Imports = append(sum.Imports, tofu.Change{Address: s.Hostname, ImportID: s.ServerID})
			}
		}
	}
	pl := summaryPlan(OpProvision, src, sum, in, existing)
	pl.DryRun = dryRun
	pl.Changes = append(poolChanges(old, in.Pools), pl.Changes...)
	return pl
}
