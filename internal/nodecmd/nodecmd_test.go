package nodecmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/manual"
)

func TestExitCode(t *testing.T) {
	tests := map[string]struct {
		err  error
		want int
	}{
		"no error":                    {nil, 0},
		"a usage error":               {cli.Usage(errors.New("--x")), 2},
		"bad input of the operations": {fmt.Errorf("show: %w", nodes.ErrNodeNotFound), 2},
		"a failure":                   {errors.New("tofu apply: exit 1"), 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ExitCode(tc.err); got != tc.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}

// TestOptionsOfTheOtherModeAreRefusedFirst checks that add and join refuse
// what does not go together before they open the project: the folder
// does not exist.
func TestOptionsOfTheOtherModeAreRefusedFirst(t *testing.T) {
	e := Env{Dir: "/nonexistent/project"}
	only := func(name string) Changed { return func(n string) bool { return n == name } }
	tests := map[string]struct {
		run  func() error
		want string
	}{
		"a node option without --hostname": {func() error {
			return Add(context.Background(), e, "demo", plasmanode.ScaffoldOptions{}, plasmanode.RegisterOptions{}, only("zone"))
		}, "--zone needs --hostname (it registers a node)"},
		"a platform option with --hostname": {func() error {
			return Add(context.Background(), e, "demo", plasmanode.ScaffoldOptions{}, plasmanode.RegisterOptions{Hostname: "n1"}, only("domain"))
		}, "--domain sets up a platform; it cannot be combined with --hostname"},
		"join without --pool": {func() error {
			return Join(context.Background(), e, plasmanode.JoinOptions{}, only("server-id"))
		}, "--pool is required"},
		"a bad output format": {func() error {
			return List(context.Background(), e, plasmanode.ListOptions{}, ListView{Output: "xml"})
		}, `--output "xml": want table, wide, name, json or yaml`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.run()
			if err == nil || ExitCode(err) != 2 {
				t.Fatalf("error %v (exit %d), want a usage error", err, ExitCode(err))
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOrNoneFillsEmptyFields(t *testing.T) {
	for in, want := range map[string]string{"": "none", "203.0.113.7": "203.0.113.7"} {
		if got := orNone(in); got != want {
			t.Errorf("orNone(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAFrontEndWithItsOwnProviders: a built-in provider left out of the
// front end's set is unknown, bad usage naming the known ones.
func TestAFrontEndWithItsOwnProviders(t *testing.T) {
	set, err := providers.NewSet(&manual.Provider{})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	e := Env{Dir: t.TempDir(), Providers: set, Stdout: &out}
	none := func(string) bool { return false }
	ctx := context.Background()
	err = Add(ctx, e, "cloud", plasmanode.ScaffoldOptions{Provider: "hetzner"}, plasmanode.RegisterOptions{}, none)
	if diff := cmp.Diff(`provider "hetzner": unknown provider (known: manual)`, fmt.Sprint(err)); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	if rc := ExitCode(err); rc != 2 {
		t.Errorf("ExitCode() = %d, want 2", rc)
	}
	if err := Add(ctx, e, "hand", plasmanode.ScaffoldOptions{Provider: "manual"}, plasmanode.RegisterOptions{}, none); err != nil {
		t.Errorf("a provider of the set: %v", err)
	}
}
