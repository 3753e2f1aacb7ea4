package tofu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/tofutest"
)

// These tests run the real tofu (see internal/tofutest) with the local
// provider and tofu's built-in terraform_data resource, offline: providers
// come from the .ci/tools.sh mirror only. They skip when the tools are
// missing, and fail instead under PLASMA_E2E=1.

const e2eSecret = "e2e-s3cr3t-9f3b1c"

type e2e struct {
	t              *testing.T
	wd             *Workdir
	r              *Runner
	out            string // folder of the local files
	stdout, stderr bytes.Buffer
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	bin := tofutest.Binary(t)
	rc := tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Local))
	wd, err := OpenWorkdir(t.TempDir(), "e2e")
	if err != nil {
		t.Fatal(err)
	}
	e := &e2e{t: t, wd: wd, out: t.TempDir()}
	e.r, err = NewRunner(Binary{Path: bin, Name: "tofu"}, wd, RunnerOptions{
		Stdout: &e.stdout, Stderr: &e.stderr,
		Env:       map[string]string{"TF_CLI_CONFIG_FILE": rc},
		WaitDelay: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tofu stdout:\n%s\ntofu stderr:\n%s", e.stdout.String(), e.stderr.String())
		}
	})
	return e
}

// plan writes cfg, plans and classifies.
func (e *e2e) plan(ctx context.Context, cfg *Config, destr DestructiveFunc, opts PlanOptions) (*SavedPlan, Summary) {
	e.t.Helper()
	if err := e.wd.WriteConfig(cfg); err != nil {
		e.t.Fatal(err)
	}
	plan, err := e.r.Plan(ctx, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	fi, err := os.Stat(plan.Path)
	if err != nil {
		e.t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		e.t.Errorf("plan file mode = %v, want 0600", fi.Mode().Perm())
	}
	js, err := e.r.Show(ctx, plan)
	if err != nil {
		e.t.Fatal(err)
	}
	return plan, Classify(js, destr)
}

func addrs(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Address)
	}
	return out
}

func localConfig(out string, files map[string]string, meta string, adopt bool) *Config {
	cfg := &Config{
		RequiredProviders: []RequiredProvider{{Name: "local", Source: "hashicorp/local", Version: "1.4.0"}},
		Variables:         []Variable{{Name: "token", Type: "string", Sensitive: true}},
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		cfg.Resources = append(cfg.Resources, Resource{Type: "local_file", Name: n, Attrs: map[string]any{
			"filename": filepath.Join(out, n+".txt"),
			"content":  files[n],
		}})
	}
	if meta != "" {
		cfg.Resources = append(cfg.Resources, Resource{Type: "terraform_data", Name: "meta", Attrs: map[string]any{"input": meta}})
		cfg.Outputs = append(cfg.Outputs, Output{Name: "meta", Value: Expr("terraform_data.meta.output")})
	}
	if adopt {
		cfg.Imports = []Import{{To: "terraform_data.adopted", ID: "existing-42"}}
		cfg.Resources = append(cfg.Resources, Resource{Type: "terraform_data", Name: "adopted", Lifecycle: &Lifecycle{IgnoreAllChanges: true}})
	}
	return cfg
}

// TestE2ELocalLifecycle: init → plan (creates) → apply → change → plan
// (replace, in-place, delete, destructive by the caller's rule) → apply →
// import adoption → no-op → destroy plan → apply → adoption after the
// state is lost creates nothing; no credential is left in the working
// directory.
//
// local_file (provider v1.4.0) cannot be imported and replaces on every
// change, so in-place updates and import blocks use tofu's built-in
// terraform_data.
func TestE2ELocalLifecycle(t *testing.T) {
	e := newE2E(t)
	ctx := context.Background()
	remove, err := e.wd.WriteVarsFile(map[string]any{"token": e2eSecret})
	if err != nil {
		t.Fatal(err)
	}
	defer remove()

	start := time.Now()
	if err := e.wd.WriteConfig(localConfig(e.out, map[string]string{"a": "one", "b": "bee"}, "v1", false)); err != nil {
		t.Fatal(err)
	}
	if err := e.r.Init(ctx, InitOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("init took %v", time.Since(start))

	// 1. Everything is new.
	start = time.Now()
	plan, sum := e.plan(ctx, localConfig(e.out, map[string]string{"a": "one", "b": "bee"}, "v1", false), nil, PlanOptions{})
	t.Logf("plan+show took %v", time.Since(start))
	if !plan.Changes {
		t.Error("first plan has no changes")
	}
	if diff := cmp.Diff([]string{"local_file.a", "local_file.b", "terraform_data.meta"}, addrs(sum.Creates)); diff != "" {
		t.Errorf("creates mismatch (-want +got):\n%s", diff)
	}
	if n := len(sum.Updates) + len(sum.Replacements) + len(sum.Deletes) + len(sum.DestructiveUpdates); n != 0 {
		t.Errorf("first plan: %s, want creates only", sum)
	}
	start = time.Now()
	if err := e.r.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
	t.Logf("apply took %v", time.Since(start))
	if b, err := os.ReadFile(filepath.Join(e.out, "a.txt")); err != nil || string(b) != "one" {
		t.Errorf("a.txt = %q, %v; want one", b, err)
	}
	outs, err := e.r.Output(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(outs["meta"].Value); got != `"v1"` {
		t.Errorf("output meta = %s, want \"v1\"", got)
	}

	// 2. Real replace, in-place update and delete.
	v2 := localConfig(e.out, map[string]string{"a": "uno"}, "v2", false)
	plan, sum = e.plan(ctx, v2, nil, PlanOptions{})
	if diff := cmp.Diff([]string{"local_file.a"}, addrs(sum.Replacements)); diff != "" {
		t.Errorf("replacements mismatch (-want +got):\n%s", diff)
	}
	if len(sum.Replacements) == 1 && !slices.Contains(sum.Replacements[0].ChangedAttrs, "content") {
		t.Errorf("replacement changed attrs = %v, want content among them", sum.Replacements[0].ChangedAttrs)
	}
	if diff := cmp.Diff([]string{"local_file.b"}, addrs(sum.Deletes)); diff != "" {
		t.Errorf("deletes mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"terraform_data.meta"}, addrs(sum.Updates)); diff != "" {
		t.Errorf("updates mismatch (-want +got):\n%s", diff)
	}
	if len(sum.Updates) == 1 && !slices.Contains(sum.Updates[0].ChangedAttrs, "input") {
		t.Errorf("update changed attrs = %v, want input among them", sum.Updates[0].ChangedAttrs)
	}
	if len(sum.Creates) != 0 || len(sum.DestructiveUpdates) != 0 {
		t.Errorf("second plan: %s", sum)
	}
	// The same real plan under a provider rule calling input destructive.
	js, err := e.r.Show(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	destr := Classify(js, DestructiveAttrs(map[string][]string{"terraform_data": {"input"}}))
	if len(destr.Updates) != 0 || len(destr.DestructiveUpdates) != 1 || !slices.Equal(destr.DestructiveUpdates[0].DestructiveAttrs, []string{"input"}) {
		t.Errorf("with input destructive: %s, %+v", destr, destr.DestructiveUpdates)
	}
	if err := e.r.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(e.out, "a.txt")); err != nil || string(b) != "uno" {
		t.Errorf("a.txt = %q, %v; want uno", b, err)
	}
	if _, err := os.Stat(filepath.Join(e.out, "b.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("b.txt still there: %v", err)
	}

	// 3. Adoption through an import block: an import, nothing else.
	v3 := localConfig(e.out, map[string]string{"a": "uno"}, "v2", true)
	plan, sum = e.plan(ctx, v3, nil, PlanOptions{})
	if diff := cmp.Diff(Summary{Imports: []Change{{Address: "terraform_data.adopted", Type: "terraform_data", ImportID: "existing-42"}}}, sum); diff != "" {
		t.Errorf("import plan mismatch (-want +got):\n%s", diff)
	}
	if err := e.r.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
	state, err := e.r.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var adoptedID any
	if state.Values != nil {
		for _, res := range state.Values.RootModule.Resources {
			if res.Address == "terraform_data.adopted" {
				adoptedID = res.AttributeValues["id"]
			}
		}
	}
	if adoptedID != "existing-42" {
		t.Errorf("adopted id in state = %v, want existing-42", adoptedID)
	}

	// 4. The same configuration again changes nothing.
	plan, sum = e.plan(ctx, v3, nil, PlanOptions{})
	if plan.Changes || !sum.Empty() || len(sum.Imports) != 0 {
		t.Errorf("converged plan: changes %v, %s", plan.Changes, sum)
	}

	// 5. Destroy through a saved destroy plan.
	plan, sum = e.plan(ctx, v3, nil, PlanOptions{Destroy: true})
	if diff := cmp.Diff([]string{"local_file.a", "terraform_data.adopted", "terraform_data.meta"}, addrs(sum.Deletes)); diff != "" {
		t.Errorf("destroy deletes mismatch (-want +got):\n%s", diff)
	}
	if err := e.r.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.out, "a.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a.txt still there after destroy: %v", err)
	}

	// 6. Lost state: the import block re-adopts, nothing is created.
	// (Clean removes the variables file too: write it again.)
	if err := e.wd.Clean(CleanOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.wd.Path(varsFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Clean left the variables file: %v", err)
	}
	if remove, err = e.wd.WriteVarsFile(map[string]any{"token": e2eSecret}); err != nil {
		t.Fatal(err)
	}
	adoptOnly := localConfig(e.out, nil, "", true)
	plan, sum = e.plan(ctx, adoptOnly, nil, PlanOptions{})
	if len(sum.Creates) != 0 || diff(addrs(sum.Imports), []string{"terraform_data.adopted"}) != "" {
		t.Errorf("after state loss: %s, want one import and no create", sum)
	}
	if err := e.r.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if err := e.r.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if state, err := e.r.State(ctx); err != nil || (state.Values != nil && len(state.Values.RootModule.Resources) != 0) {
		t.Errorf("state after Destroy = %+v, %v; want empty", state.Values, err)
	}

	// 7. No credential outlives the run.
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if err := e.wd.Clean(CleanOptions{}); err != nil {
		t.Fatal(err)
	}
	assertNoSecret(t, e.wd.Dir(), e2eSecret)
	for name, s := range map[string]string{"stdout": e.stdout.String(), "stderr": e.stderr.String()} {
		if strings.Contains(s, e2eSecret) {
			t.Errorf("the secret was streamed to %s", name)
		}
	}
	if !strings.Contains(e.stdout.String(), "Apply complete!") {
		t.Errorf("apply output was not streamed")
	}
}

func diff(a, b []string) string { return cmp.Diff(a, b) }

// assertNoSecret fails when any file under dir, .terraform included,
// holds secret.
func assertNoSecret(t *testing.T, dir, secret string) {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files = append(files, strings.TrimPrefix(p, dir+string(filepath.Separator)))
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the secret", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("files left in the working directory: %v", files)
}

// TestE2ECancelApply cancels a slow apply (a local-exec provisioner
// sleeping) with a deadline. While it runs, a second plan in the same
// working directory fails with ErrStateLocked. The error matches
// context.DeadlineExceeded, tofu stops on SIGINT well before the wait
// delay, kills the provisioner, and leaves no lock and readable state
// behind, so the next plan runs.
func TestE2ECancelApply(t *testing.T) {
	e := newE2E(t)
	ctx := context.Background()
	marker := "47.123" // an unusual sleep length, to find the process
	cfg := &Config{Resources: []Resource{{
		Type: "terraform_data", Name: "slow",
		Attrs: map[string]any{"input": "x"},
		Blocks: []Block{{Type: "provisioner", Labels: []string{"local-exec"},
			// exec: the shell becomes the sleep, so tofu's kill of the
			// provisioner reaches it (a child of sh would be orphaned).
			Attrs: map[string]any{"command": "exec sleep " + marker}}},
	}}}
	if err := e.wd.WriteConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if err := e.r.Init(ctx, InitOptions{}); err != nil {
		t.Fatal(err)
	}
	plan, err := e.r.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}

	cctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	start := time.Now()
	applied := make(chan error, 1)
	go func() { applied <- e.r.Apply(cctx, plan) }()

	// While the apply holds the state lock, a second run is refused.
	time.Sleep(1500 * time.Millisecond)
	var out2 bytes.Buffer
	r2, err := NewRunner(e.r.bin, e.wd, RunnerOptions{Stdout: &out2, Stderr: &out2, Env: e.r.opts.Env})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Plan(ctx, PlanOptions{}); !errors.Is(err, ErrStateLocked) {
		t.Errorf("a plan during the apply = %v, want ErrStateLocked\n%s", err, out2.String())
	}

	err = <-applied
	took := time.Since(start)
	t.Logf("cancelled apply returned after %v: %v", took, err)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Apply = %v, want context.DeadlineExceeded", err)
	}
	if took > 20*time.Second {
		t.Errorf("apply took %v to stop: tofu was killed after the wait delay instead of stopping on SIGINT", took)
	}
	if !strings.Contains(e.stdout.String()+e.stderr.String(), "Interrupt received") {
		t.Errorf("tofu did not report the interrupt")
	}
	// The provisioner's sleep is gone.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _ := exec.Command("pgrep", "-f", "sleep "+marker).Output()
		if len(bytes.TrimSpace(out)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the provisioner still runs: pids %s", out)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// State is readable JSON and the lock is free: a new plan runs.
	if b, err := os.ReadFile(e.wd.Path(StateFile)); err == nil && !json.Valid(b) {
		t.Errorf("state file is not valid JSON after the interrupt")
	}
	if _, err := os.Stat(e.wd.Path(".terraform.tfstate.lock.info")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a lock info file was left: %v", err)
	}
	cfg.Resources[0].Blocks = nil
	if err := e.wd.WriteConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.r.Plan(ctx, PlanOptions{}); err != nil {
		t.Errorf("plan after the interrupt: %v", err)
	}
}

// TestE2EVersion checks that terraform-exec reads tofu's version.
func TestE2EVersion(t *testing.T) {
	e := newE2E(t)
	v, err := e.r.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v == "" || strings.HasPrefix(v, "0.") {
		t.Errorf("Version = %q", v)
	}
	t.Logf("tofu version %s", v)
}
