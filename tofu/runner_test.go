package tofu

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The test binary doubles as a fake tofu: with TOFU_FAKE=1 in its
// environment it records its argv and a few variables, and acts out what
// the TOFU_FAKE_* variables say. That checks the argv and environment
// terraform-exec builds from this package's options without a real tofu.
func TestMain(m *testing.M) {
	if os.Getenv("TOFU_FAKE") == "1" {
		os.Exit(fakeTofu(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeCall is one recorded invocation of the fake.
type fakeCall struct {
	Args []string          `json:"args"`
	Env  map[string]string `json:"env"`
	Note string            `json:"note,omitempty"`
}

var fakeEnvKeys = []string{"HCLOUD_TOKEN", "CHECKPOINT_DISABLE", "TF_IN_AUTOMATION", "TF_VAR_leak", "TF_CLI_CONFIG_FILE", "SOME_PARENT_VAR"}

func fakeRecord(args []string, note string) {
	env := map[string]string{}
	for _, k := range fakeEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	b, _ := json.Marshal(fakeCall{Args: args, Env: env, Note: note})
	f, err := os.OpenFile(os.Getenv("TOFU_FAKE_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(append(b, '\n'))
}

func fakeTofu(args []string) int {
	if len(args) == 0 {
		return 1
	}
	if args[0] == "version" {
		fmt.Println(`{"terraform_version":"1.12.6","platform":"linux_amd64","provider_selections":{},"terraform_outdated":false}`)
		return 0
	}
	fakeRecord(args, "")
	if msg := os.Getenv("TOFU_FAKE_STDERR"); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		return 1
	}
	switch args[0] {
	case "init":
		fmt.Println("OpenTofu has been successfully initialized!")
	case "plan":
		for _, a := range args {
			if out, ok := strings.CutPrefix(a, "-out="); ok {
				if err := os.WriteFile(out, []byte("fake plan"), 0o644); err != nil {
					return 1
				}
			}
		}
		fmt.Println("Plan: 1 to add, 0 to change, 0 to destroy.")
		if os.Getenv("TOFU_FAKE_NO_CHANGES") == "1" {
			return 0
		}
		return 2
	case "apply", "destroy":
		if os.Getenv("TOFU_FAKE_SLOW") == "1" {
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGINT)
			fakeRecord(args, "ready")
			fmt.Println("applying, slowly")
			select {
			case <-sig:
				fakeRecord(args, "SIGINT")
				fmt.Println("Interrupt received. Gracefully shutting down...")
				return 1
			case <-time.After(30 * time.Second):
				return 0
			}
		}
		fmt.Println("Apply complete! Resources: 1 added, 0 changed, 0 destroyed.")
	case "show":
		if !strings.HasSuffix(args[len(args)-1], planFile) {
			fmt.Println(`{"format_version":"1.0","terraform_version":"1.12.6","values":{"root_module":{}}}`)
			return 0
		}
		if args[1] != "-json" {
			fmt.Println("OpenTofu will perform the following actions: (text)")
			return 0
		}
		fmt.Println(`{"format_version":"1.2","terraform_version":"1.12.6","resource_changes":[{"address":"local_file.a","mode":"managed","type":"local_file","name":"a","change":{"actions":["create"],"before":null,"after":{"content":"x"}}}]}`)
	case "output":
		fmt.Println(`{"token":{"sensitive":true,"type":"string","value":"s3cr3t-output"}}`)
	default:
		return 1
	}
	return 0
}

func fakeCalls(t *testing.T, log string) []fakeCall {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []fakeCall
	s := bufio.NewScanner(f)
	for s.Scan() {
		var c fakeCall
		if err := json.Unmarshal(s.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
	}
	return calls
}

// fakeRunner returns a Runner on the fake tofu and the path of its log.
func fakeRunner(t *testing.T, env map[string]string, opts RunnerOptions) (*Runner, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wd, err := OpenWorkdir(t.TempDir(), "prod")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "calls.jsonl")
	opts.Env = map[string]string{"TOFU_FAKE": "1", "TOFU_FAKE_LOG": log}
	for k, v := range env {
		opts.Env[k] = v
	}
	r, err := NewRunner(Binary{Path: exe, Name: "tofu"}, wd, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r, log
}

func TestRunnerArgvAndEnv(t *testing.T) {
	t.Setenv("TF_VAR_leak", "from the parent")
	t.Setenv("SOME_PARENT_VAR", "inherited")
	var stdout, stderr bytes.Buffer
	r, log := fakeRunner(t, map[string]string{"HCLOUD_TOKEN": "tok", "TF_CLI_CONFIG_FILE": "/x/tofurc"},
		RunnerOptions{Stdout: &stdout, Stderr: &stderr, LockTimeout: 5 * time.Second})
	ctx := context.Background()
	if err := r.Init(ctx, InitOptions{Upgrade: true}); err != nil {
		t.Fatal(err)
	}
	plan, err := r.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Workdir().Path(planFile)
	if diff := cmp.Diff(&SavedPlan{Path: p, Changes: true}, plan); diff != "" {
		t.Errorf("Plan mismatch (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("plan file mode = %v, want 0600", fi.Mode().Perm())
	}
	js, err := r.Show(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	if got := Classify(js, nil).Creates; len(got) != 1 || got[0].Address != "local_file.a" {
		t.Errorf("Show+Classify creates = %+v, want local_file.a", got)
	}
	text, err := r.ShowText(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "(text)") {
		t.Errorf("ShowText = %q", text)
	}
	if err := r.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Plan(ctx, PlanOptions{Destroy: true}); err != nil {
		t.Fatal(err)
	}
	if err := r.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := r.Output(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]OutputValue{"token": {Sensitive: true, Value: json.RawMessage(`"s3cr3t-output"`)}}, out); diff != "" {
		t.Errorf("Output mismatch (-want +got):\n%s", diff)
	}
	if _, err := r.State(ctx); err != nil {
		t.Fatal(err)
	}
	v, err := r.Version(ctx)
	if err != nil || v != "1.12.6" {
		t.Errorf("Version = %q, %v; want 1.12.6", v, err)
	}

	var argv [][]string
	calls := fakeCalls(t, log)
	for _, c := range calls {
		argv = append(argv, c.Args)
	}
	want := [][]string{
		{"init", "-no-color", "-input=false", "-backend=true", "-get=true", "-upgrade=true"},
		{"plan", "-no-color", "-input=false", "-detailed-exitcode", "-lock-timeout=5s", "-out=" + p, "-lock=true", "-parallelism=10", "-refresh=true"},
		{"show", "-json", "-no-color", p},
		{"show", "-no-color", p},
		{"apply", "-no-color", "-auto-approve", "-input=false", "-lock-timeout=5s", "-lock=true", "-parallelism=10", "-refresh=true", p},
		{"plan", "-no-color", "-input=false", "-detailed-exitcode", "-lock-timeout=5s", "-out=" + p, "-lock=true", "-parallelism=10", "-refresh=true", "-destroy"},
		{"destroy", "-no-color", "-auto-approve", "-input=false", "-lock-timeout=5s", "-lock=true", "-parallelism=10", "-refresh=true"},
		{"output", "-no-color", "-json"},
		{"show", "-json", "-no-color"},
	}
	if diff := cmp.Diff(want, argv); diff != "" {
		t.Errorf("argv mismatch (-want +got):\n%s", diff)
	}
	wantEnv := map[string]string{
		"HCLOUD_TOKEN": "tok", "CHECKPOINT_DISABLE": "1", "TF_IN_AUTOMATION": "1",
		"TF_CLI_CONFIG_FILE": "/x/tofurc", "SOME_PARENT_VAR": "inherited",
	}
	for _, c := range calls {
		if diff := cmp.Diff(wantEnv, c.Env); diff != "" {
			t.Errorf("%s env mismatch (-want +got):\n%s", c.Args[0], diff)
		}
	}

	if !strings.Contains(stdout.String(), "successfully initialized") || !strings.Contains(stdout.String(), "Apply complete") {
		t.Errorf("init and apply output not streamed: %q", stdout.String())
	}
	for _, parsed := range []string{"s3cr3t-output", "format_version", "(text)", "terraform_version"} {
		if strings.Contains(stdout.String(), parsed) {
			t.Errorf("stdout streamed parsed output %q: %q", parsed, stdout.String())
		}
	}
}

func TestRunnerPlanWithoutChanges(t *testing.T) {
	r, _ := fakeRunner(t, map[string]string{"TOFU_FAKE_NO_CHANGES": "1"}, RunnerOptions{})
	plan, err := r.Plan(context.Background(), PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Changes {
		t.Error("Changes = true for an exit status of 0")
	}
}

func TestRunnerStateLocked(t *testing.T) {
	r, _ := fakeRunner(t, map[string]string{"TOFU_FAKE_STDERR": "Error: Error acquiring the state lock\n\nLock Info: ..."}, RunnerOptions{})
	ctx := context.Background()
	_, err := r.Plan(ctx, PlanOptions{})
	if !errors.Is(err, ErrStateLocked) {
		t.Fatalf("Plan = %v, want ErrStateLocked", err)
	}
	if _, err := os.Stat(r.Workdir().Path(planFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed plan left its plan file")
	}
	if err := r.Apply(ctx, &SavedPlan{Path: r.Workdir().Path(planFile)}); !errors.Is(err, ErrStateLocked) {
		t.Errorf("Apply = %v, want ErrStateLocked", err)
	}
}

// TestRunnerCancelSendsSIGINT cancels a slow apply of the fake: the fake
// sees SIGINT and stops by itself, long before the wait delay would kill
// it, and the error matches the context's.
func TestRunnerCancelSendsSIGINT(t *testing.T) {
	// ready waits until the fake has its SIGINT handler in place (the
	// race detector makes it slow to start).
	ready := func(log string) {
		for range 200 {
			if b, _ := os.ReadFile(log); bytes.Contains(b, []byte(`"note":"ready"`)) {
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
	tests := map[string]struct {
		ctx  func(log string) (context.Context, context.CancelFunc)
		want error
	}{
		"a deadline": {
			ctx: func(string) (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 2*time.Second)
			},
			want: context.DeadlineExceeded,
		},
		"a cancel": {
			ctx: func(log string) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				go func() { ready(log); cancel() }()
				return ctx, cancel
			},
			want: context.Canceled,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout bytes.Buffer
			r, log := fakeRunner(t, map[string]string{"TOFU_FAKE_SLOW": "1"}, RunnerOptions{Stdout: &stdout, WaitDelay: 20 * time.Second})
			ctx, cancel := tc.ctx(log)
			defer cancel()
			start := time.Now()
			err := r.Apply(ctx, &SavedPlan{Path: r.Workdir().Path(planFile)})
			took := time.Since(start)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Apply = %v, want %v", err, tc.want)
			}
			if took > 10*time.Second {
				t.Errorf("Apply took %v: the fake was killed after the wait delay, not stopped by SIGINT", took)
			}
			var notes []string
			for _, c := range fakeCalls(t, log) {
				notes = append(notes, c.Args[0]+":"+c.Note)
			}
			if diff := cmp.Diff([]string{"apply:", "apply:ready", "apply:SIGINT"}, notes); diff != "" {
				t.Errorf("calls mismatch (-want +got):\n%s", diff)
			}
			if !strings.Contains(stdout.String(), "Gracefully shutting down") {
				t.Errorf("stdout = %q, want the fake's shutdown message", stdout.String())
			}
		})
	}
}

func TestRunnerRefusesBadInput(t *testing.T) {
	wd, err := OpenWorkdir(t.TempDir(), "prod")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		bin  Binary
		opts RunnerOptions
		want string
	}{
		"a variable terraform-exec sets itself": {
			bin: Binary{Path: "/bin/true"}, opts: RunnerOptions{Env: map[string]string{"TF_VAR_token": "s3cr3t", "TF_LOG": "x"}},
			want: "TF_LOG, TF_VAR_token is set by terraform-exec itself",
		},
		"an empty binary": {
			bin: Binary{}, want: "binary path is empty",
		},
		"a negative lock timeout": {
			bin: Binary{Path: "/bin/true"}, opts: RunnerOptions{LockTimeout: -time.Second},
			want: "want durations >= 0",
		},
		"a key with =": {
			bin: Binary{Path: "/bin/true"}, opts: RunnerOptions{Env: map[string]string{"A=B": "s3cr3t"}},
			want: `key "A=B"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := NewRunner(tc.bin, wd, tc.opts)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("NewRunner = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error %q: want it to contain %q and no value", err, tc.want)
			}
		})
	}
	r, err := NewRunner(Binary{Path: "/bin/true"}, wd, RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Apply(context.Background(), nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Apply(nil) = %v, want ErrInvalid", err)
	}
	if _, err := r.Show(context.Background(), &SavedPlan{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Show(empty) = %v, want ErrInvalid", err)
	}
}

func TestBuildEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/root", "HCLOUD_TOKEN=parent", "TF_LOG=TRACE", "TF_VAR_x=1", "TF_CLI_ARGS_plan=-x", "NOEQUALS", "CHECKPOINT_DISABLE="}
	tests := map[string]struct {
		extra   map[string]string
		inherit bool
		want    map[string]string
	}{
		"the parent's environment is kept without terraform-exec's variables": {
			inherit: true,
			want:    map[string]string{"PATH": "/bin", "HOME": "/root", "HCLOUD_TOKEN": "parent", "CHECKPOINT_DISABLE": ""},
		},
		"extra variables override the parent's": {
			inherit: true, extra: map[string]string{"HCLOUD_TOKEN": "mine", "PG_CONN_STR": "postgres://"},
			want: map[string]string{"PATH": "/bin", "HOME": "/root", "HCLOUD_TOKEN": "mine", "PG_CONN_STR": "postgres://", "CHECKPOINT_DISABLE": ""},
		},
		"without inheriting only PATH and HOME are kept, and the update check is off": {
			extra: map[string]string{"HCLOUD_TOKEN": "mine"},
			want:  map[string]string{"PATH": "/bin", "HOME": "/root", "HCLOUD_TOKEN": "mine", "CHECKPOINT_DISABLE": "1"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := buildEnv(environ, tc.extra, tc.inherit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("buildEnv mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Workdir returns the working directory the Runner runs in.
func (r *Runner) Workdir() *Workdir { return r.wd }

// ShowText renders a saved plan for people, as tofu show prints it
// (sensitive values hidden).
func (r *Runner) ShowText(ctx context.Context, plan *SavedPlan) (string, error) {
	if err := checkPlan(plan); err != nil {
		return "", err
	}
	var out string
	err := r.run(ctx, "show", func() error {
		var err error
		out, err = r.quiet.ShowPlanFileRaw(ctx, plan.Path)
		return err
	})
	return out, err
}

// Version returns the binary's version, like "1.12.6" (tofu reports
// itself as Terraform to terraform-exec, with its own version number).
func (r *Runner) Version(ctx context.Context) (string, error) {
	var out string
	err := r.run(ctx, "version", func() error {
		v, _, err := r.quiet.Version(ctx, true)
		if err != nil {
			return err
		}
		out = v.String()
		return nil
	})
	return out, err
}
