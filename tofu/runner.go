package tofu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
)

// DefaultWaitDelay is how long a cancelled run may take to stop after
// SIGINT before it is killed, when [RunnerOptions.WaitDelay] is zero.
const DefaultWaitDelay = 60 * time.Second

// RunnerOptions configure a [Runner]. The zero value streams nothing,
// inherits the process environment and waits [DefaultWaitDelay] for a
// cancelled run to stop.
type RunnerOptions struct {
	// Stdout and Stderr receive the output of init, plan, apply and
	// destroy as it comes, for people to read; nil discards it. The JSON
	// that show, output and version print is never streamed (output JSON
	// holds sensitive values in clear).
	Stdout, Stderr io.Writer

	// Env is added to the inherited environment: provider credentials
	// (HCLOUD_TOKEN), the pg connection string ([PGConnEnv]),
	// TF_CLI_CONFIG_FILE. Values are never logged. Variables that
	// terraform-exec manages itself (TF_LOG*, TF_VAR_*, TF_CLI_ARGS*,
	// TF_INPUT, TF_WORKSPACE, ...) are refused here and dropped from the
	// inherited environment.
	Env map[string]string

	// NoInheritEnv starts from an empty environment instead of the
	// process's (Env still applies; PATH and HOME are kept).
	NoInheritEnv bool

	// LockTimeout is how long plan and apply wait for the state lock;
	// zero fails at once with [ErrStateLocked] when another run holds it.
	LockTimeout time.Duration

	// WaitDelay is how long a cancelled run may take to stop after
	// SIGINT before it is killed; zero means [DefaultWaitDelay].
	WaitDelay time.Duration

	// Logger receives one record per command; nil discards them.
	Logger *slog.Logger
}

// Runner runs tofu commands in one [Workdir] through terraform-exec. Every
// method takes a context: cancelling it sends tofu SIGINT and waits up to
// [RunnerOptions.WaitDelay] for it to stop, so state is not left half
// written; the error then matches context.Canceled or
// context.DeadlineExceeded. A Runner's settings are fixed by NewRunner;
// its methods may be called from several goroutines, but runs that change
// state in one working directory should not overlap (tofu's state lock
// refuses the second with [ErrStateLocked]).
type Runner struct {
	wd    *Workdir
	bin   Binary
	opts  RunnerOptions
	log   *slog.Logger
	loud  *tfexec.Terraform // streams to Stdout/Stderr
	quiet *tfexec.Terraform // for commands whose stdout is parsed

	// terraform-exec runs `version -json` on first use of some commands
	// (a compatibility check), through the streaming writers. prime runs
	// it once up front with the gate closed, so the JSON is not streamed.
	gate   *gate
	primed sync.Mutex
	ready  bool
}

// gate passes writes to w once opened, and drops them before.
type gate struct {
	open atomic.Bool
}

type gateWriter struct {
	g *gate
	w io.Writer
}

func (w gateWriter) Write(p []byte) (int, error) {
	if !w.g.open.Load() {
		return len(p), nil
	}
	return w.w.Write(p)
}

// prime fills the streaming instance's version cache with the streaming
// writers closed, then opens them.
func (r *Runner) prime(ctx context.Context) error {
	r.primed.Lock()
	defer r.primed.Unlock()
	if r.ready {
		return nil
	}
	if _, _, err := r.loud.Version(ctx, false); err != nil {
		return fmt.Errorf("version: %w", err)
	}
	r.gate.open.Store(true)
	r.ready = true
	return nil
}

// NewRunner returns a Runner for bin in wd.
//
// Errors: one matching [ErrInvalid] for an Env key terraform-exec
// manages, or a bad option.
func NewRunner(bin Binary, wd *Workdir, opts RunnerOptions) (*Runner, error) {
	if bin.Path == "" {
		return nil, fmt.Errorf("new runner: %w: binary path is empty: want a Binary from Find", ErrInvalid)
	}
	if wd == nil {
		return nil, fmt.Errorf("new runner: %w: no working directory: want one from OpenWorkdir", ErrInvalid)
	}
	if opts.LockTimeout < 0 || opts.WaitDelay < 0 {
		return nil, fmt.Errorf("new runner: %w: LockTimeout %v, WaitDelay %v: want durations >= 0", ErrInvalid, opts.LockTimeout, opts.WaitDelay)
	}
	env, err := buildEnv(os.Environ(), opts.Env, !opts.NoInheritEnv)
	if err != nil {
		return nil, err
	}
	delay := opts.WaitDelay
	if delay == 0 {
		delay = DefaultWaitDelay
	}
	r := &Runner{wd: wd, bin: bin, opts: opts, log: logger(opts.Logger)}
	for _, p := range []**tfexec.Terraform{&r.loud, &r.quiet} {
		tf, err := tfexec.NewTerraform(wd.Dir(), bin.Path)
		if err != nil {
			return nil, fmt.Errorf("new runner: %w", err)
		}
		if err := tf.SetEnv(env); err != nil {
			return nil, fmt.Errorf("new runner: %w: %v", ErrInvalid, err)
		}
		if err := tf.SetWaitDelay(delay); err != nil {
			return nil, fmt.Errorf("new runner: %w", err)
		}
		*p = tf
	}
	r.gate = &gate{}
	if opts.Stdout != nil {
		r.loud.SetStdout(gateWriter{r.gate, opts.Stdout})
	}
	if opts.Stderr != nil {
		r.loud.SetStderr(gateWriter{r.gate, opts.Stderr})
	}
	return r, nil
}

// InitOptions tune [Runner.Init].
type InitOptions struct {
	// Upgrade picks the newest provider versions the constraints allow,
	// ignoring the dependency lock file (init -upgrade).
	Upgrade bool
	// Reconfigure forgets the previous backend settings without
	// migrating state (init -reconfigure), for a changed backend.
	Reconfigure bool
}

// Init runs tofu init: installs providers (from the CLI configuration's
// mirrors when there is one) and prepares the backend.
func (r *Runner) Init(ctx context.Context, opts InitOptions) error {
	return r.run(ctx, "init", func() error {
		return r.loud.Init(ctx, initOptions(opts)...)
	})
}

func initOptions(opts InitOptions) []tfexec.InitOption {
	return []tfexec.InitOption{tfexec.Upgrade(opts.Upgrade), tfexec.Reconfigure(opts.Reconfigure)}
}

// PlanOptions tune [Runner.Plan].
type PlanOptions struct {
	// Destroy plans the destruction of everything in state (plan
	// -destroy).
	Destroy bool
}

// SavedPlan is a plan [Runner.Plan] wrote to the working directory. Apply
// it with [Runner.Apply], which applies exactly this plan and nothing
// planned later; tofu refuses it if state changed in between.
type SavedPlan struct {
	// Path is the absolute path of the 0600 plan file. It holds variable
	// values, credentials included; [Workdir.Clean] removes it.
	Path string
	// Changes is false when tofu planned nothing to do.
	Changes bool
}

// Plan runs tofu plan and saves the plan to plan.tfplan (0600) in the
// working directory, replacing any earlier one.
//
// Errors: [ErrStateLocked] when another run holds the state lock.
func (r *Runner) Plan(ctx context.Context, opts PlanOptions) (*SavedPlan, error) {
	p := r.wd.Path(planFile)
	// Create the file 0600 first, so tofu writes into a private file;
	// chmod after, in case tofu replaced it.
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("tofu plan: %w", err)
	}
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return nil, fmt.Errorf("tofu plan: %w", err)
	}
	var changes bool
	err := r.run(ctx, "plan", func() error {
		var err error
		changes, err = r.loud.Plan(ctx, planOptions(p, opts, r.opts.LockTimeout)...)
		return err
	})
	if err != nil {
		os.Remove(p)
		return nil, err
	}
	if err := os.Chmod(p, 0o600); err != nil {
		os.Remove(p)
		return nil, fmt.Errorf("tofu plan: %w", err)
	}
	return &SavedPlan{Path: p, Changes: changes}, nil
}

func planOptions(out string, opts PlanOptions, lockTimeout time.Duration) []tfexec.PlanOption {
	o := []tfexec.PlanOption{tfexec.Out(out), tfexec.Destroy(opts.Destroy)}
	if lockTimeout > 0 {
		o = append(o, tfexec.LockTimeout(lockTimeout.String()))
	}
	return o
}

// Show reads a saved plan as JSON.
func (r *Runner) Show(ctx context.Context, plan *SavedPlan) (*tfjson.Plan, error) {
	if err := checkPlan(plan); err != nil {
		return nil, err
	}
	var out *tfjson.Plan
	err := r.run(ctx, "show", func() error {
		var err error
		out, err = r.quiet.ShowPlanFile(ctx, plan.Path)
		return err
	})
	return out, err
}

// Apply applies exactly the saved plan.
//
// Errors: [ErrStateLocked] when another run holds the state lock; an
// error matching context.Canceled or context.DeadlineExceeded when ctx
// ended the run (tofu was sent SIGINT and stopped).
func (r *Runner) Apply(ctx context.Context, plan *SavedPlan) error {
	if err := checkPlan(plan); err != nil {
		return err
	}
	return r.run(ctx, "apply", func() error {
		return r.loud.Apply(ctx, applyOptions(plan.Path, r.opts.LockTimeout)...)
	})
}

func applyOptions(plan string, lockTimeout time.Duration) []tfexec.ApplyOption {
	o := []tfexec.ApplyOption{tfexec.DirOrPlan(plan)}
	if lockTimeout > 0 {
		o = append(o, tfexec.LockTimeout(lockTimeout.String()))
	}
	return o
}

// Destroy destroys everything in state without a saved plan (tofu
// destroy -auto-approve). To show people what will go first, use
// [Runner.Plan] with PlanOptions.Destroy and [Runner.Apply] instead.
//
// Errors: as [Runner.Apply].
func (r *Runner) Destroy(ctx context.Context) error {
	return r.run(ctx, "destroy", func() error {
		return r.loud.Destroy(ctx, destroyOptions(r.opts.LockTimeout)...)
	})
}

func destroyOptions(lockTimeout time.Duration) []tfexec.DestroyOption {
	var o []tfexec.DestroyOption
	if lockTimeout > 0 {
		o = append(o, tfexec.LockTimeout(lockTimeout.String()))
	}
	return o
}

// OutputValue is one root module output.
type OutputValue struct {
	// Sensitive is true for an output declared sensitive; its Value is
	// still in clear.
	Sensitive bool
	// Value is the output's value as JSON.
	Value json.RawMessage
}

// Output reads the root module outputs from state.
func (r *Runner) Output(ctx context.Context) (map[string]OutputValue, error) {
	var out map[string]OutputValue
	err := r.run(ctx, "output", func() error {
		m, err := r.quiet.Output(ctx)
		if err != nil {
			return err
		}
		out = make(map[string]OutputValue, len(m))
		for k, v := range m {
			out[k] = OutputValue{Sensitive: v.Sensitive, Value: v.Value}
		}
		return nil
	})
	return out, err
}

// State reads the current state as JSON (tofu show -json).
func (r *Runner) State(ctx context.Context) (*tfjson.State, error) {
	var out *tfjson.State
	err := r.run(ctx, "show", func() error {
		var err error
		out, err = r.quiet.Show(ctx)
		return err
	})
	return out, err
}

func checkPlan(plan *SavedPlan) error {
	if plan == nil || plan.Path == "" {
		return fmt.Errorf("%w: no saved plan: want the result of Runner.Plan", ErrInvalid)
	}
	return nil
}

// lockMarker starts tofu's (and Terraform's) error for a held state lock.
const lockMarker = "Error acquiring the state lock"

// run runs one command, logs it and wraps its error.
func (r *Runner) run(ctx context.Context, cmd string, f func() error) error {
	start := time.Now()
	err := r.prime(ctx)
	if err == nil {
		err = f()
	}
	r.log.Debug("tofu command", "cmd", cmd, "dir", r.wd.Dir(), "took", time.Since(start), "ok", err == nil)
	if err == nil {
		return nil
	}
	switch {
	case ctx.Err() != nil:
		if errors.Is(err, ctx.Err()) {
			return fmt.Errorf("tofu %s: stopped (%v): %w", cmd, ctx.Err(), err)
		}
		return fmt.Errorf("tofu %s: stopped: %w: %w", cmd, ctx.Err(), err)
	case strings.Contains(err.Error(), lockMarker):
		return fmt.Errorf("tofu %s: %w: %w", cmd, ErrStateLocked, err)
	}
	return fmt.Errorf("tofu %s: %w", cmd, err)
}
