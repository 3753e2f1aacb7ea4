package plasmanode

import (
	"context"
	"fmt"
	"io"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// TofuOptions are the tofu settings of every operation that runs tofu
// (provision, join, destroy, delete). Their zero value looks tofu up and
// discards its output.
type TofuOptions struct {
	// Stdout and Stderr receive tofu's output; nil discards it.
	Stdout, Stderr io.Writer
	// TofuPath is an explicit tofu or terraform binary; empty looks up
	// tofu, then terraform, on PATH.
	TofuPath string
	// Getenv reads credentials from the environment; nil means os.Getenv.
	Getenv func(string) string
	// Env is added to tofu's environment (TF_CLI_CONFIG_FILE, say).
	Env map[string]string
}

// tofuRun is a working directory and runner for one operation.
type tofuRun struct {
	wd   *tofu.Workdir
	r    *tofu.Runner
	prov providers.Provider
	log  func(msg string, args ...any)
	// last is the JSON of the last plan.
	last *tfjson.Plan
	// backend is where the state is kept, set into every configuration.
	backend tofu.Backend
	// inited is set once tofu init ran: the configurations of one run
	// differ only in resources and imports (same providers, same
	// backend), so later ones need no init of their own.
	inited bool
}

func (p *Project) startTofu(ctx context.Context, plat *nodes.Platform, prov providers.Provider, o TofuOptions) (*tofuRun, error) {
	getenv := o.getenv()
	env, err := prov.Credentials(plat, getenv)
	if err != nil {
		return nil, fmt.Errorf("platform %s credentials: %w", plat.Name, err)
	}
	backend, benv, err := stateBackend(plat, getenv)
	if err != nil {
		return nil, err
	}
	for k, v := range benv {
		env[k] = v
	}
	for k, v := range o.Env {
		env[k] = v
	}
	bin, err := tofu.Find(ctx, tofu.FindOptions{Path: o.TofuPath, Logger: p.log})
	if err != nil {
		return nil, err
	}
	wd, err := tofu.OpenWorkdir(p.Store.Dir(), plat.Name)
	if err != nil {
		return nil, err
	}
	if err := wd.Clean(tofu.CleanOptions{}); err != nil {
		return nil, fmt.Errorf("clean %s: %w", wd.Dir(), err)
	}
	r, err := tofu.NewRunner(bin, wd, tofu.RunnerOptions{Stdout: o.Stdout, Stderr: o.Stderr, Env: env, Logger: p.log})
	if err != nil {
		return nil, err
	}
	return &tofuRun{wd: wd, r: r, prov: prov, log: p.log.Warn, backend: backend}, nil
}

// close removes the transient state, plan and variables files.
func (t *tofuRun) close() {
	if err := t.wd.Clean(tofu.CleanOptions{}); err != nil {
		t.log("clean tofu working directory", "dir", t.wd.Dir(), "err", err)
	}
}

// statePath names where the state is, for messages.
func (t *tofuRun) statePath() string {
	if t.backend.Persistent() {
		return "the " + t.backend.Type + " backend"
	}
	return t.wd.Path(tofu.StateFile)
}

// init writes cfg, with the run's backend, and runs tofu init the first
// time.
func (t *tofuRun) init(ctx context.Context, cfg *tofu.Config) error {
	cfg.Backend = t.backend
	b, err := cfg.Render()
	if err != nil {
		return fmt.Errorf("write configuration: %w", err)
	}
	if err := t.wd.WriteConfigBytes(b); err != nil {
		return err
	}
	if t.inited {
		return nil
	}
	if err := t.r.Init(ctx, tofu.InitOptions{Reconfigure: true}); err != nil {
		return err // the runner's error names tofu init
	}
	t.inited = true
	return nil
}

func (t *tofuRun) plan(ctx context.Context, cfg *tofu.Config, po tofu.PlanOptions) (*tofu.SavedPlan, tofu.Summary, error) {
	if cfg != nil {
		if err := t.init(ctx, cfg); err != nil {
			return nil, tofu.Summary{}, err
		}
	}
	sp, err := t.r.Plan(ctx, po)
	if err != nil {
		return nil, tofu.Summary{}, fmt.Errorf("tofu plan: %w", err)
	}
	js, err := t.r.Show(ctx, sp)
	if err != nil {
		return nil, tofu.Summary{}, fmt.Errorf("tofu show: %w", err)
	}
	t.last = js
	return sp, tofu.Classify(js, t.prov.Destructive()), nil
}

func (t *tofuRun) servers(ctx context.Context) ([]providers.Server, error) {
	out, err := t.r.Output(ctx)
	if err != nil {
		return nil, fmt.Errorf("tofu output: %w", err)
	}
	s, err := t.prov.Servers(out)
	if err != nil {
		return nil, fmt.Errorf("%s servers: %w", t.prov.Name(), err)
	}
	if e, ok := t.prov.(providers.StateEnricher); ok && len(s) > 0 {
		st, err := t.r.State(ctx)
		if err != nil {
			return nil, fmt.Errorf("read state: %w", err)
		}
		providers.Enrich(e, s, func(yield func(string, map[string]any) bool) {
			for _, r := range rootResources(st) {
				if r.Mode == tfjson.ManagedResourceMode && !yield(r.Type, r.AttributeValues) {
					return
				}
			}
		})
	}
	return s, nil
}

// rootResources are the resources of st's root module; none for an
// empty state.
func rootResources(st *tfjson.State) []*tfjson.StateResource {
	if st == nil || st.Values == nil || st.Values.RootModule == nil {
		return nil
	}
	return st.Values.RootModule.Resources
}
