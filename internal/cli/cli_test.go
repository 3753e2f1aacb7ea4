package cli

import (
	"log/slog"
	"strings"

	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/spf13/cobra"
)

func TestExitCodes(t *testing.T) {
	bad := errors.New("bad input")
	tests := map[string]struct {
		err  error
		want int
	}{
		"no error is 0":                  {nil, 0},
		"a failure is 1":                 {errors.New("disk full"), 1},
		"a usage error is 2":             {Usage(errors.New("--x: want y")), 2},
		"a wrapped usage error is 2":     {errors.Join(errors.New("a"), Usage(errors.New("b"))), 2},
		"cobra's unknown command is 2":   {errors.New(`unknown command "frob" for "x"`), 2},
		"cobra's required flag is 2":     {errors.New(`required flag(s) "pool" not set`), 2},
		"what the caller calls bad is 2": {bad, 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var w bytes.Buffer
			if got := Exit(&w, "x", tc.err, func(err error) bool { return errors.Is(err, bad) }); got != tc.want {
				t.Errorf("Exit = %d, want %d", got, tc.want)
			}
			if (tc.err == nil) != (w.Len() == 0) {
				t.Errorf("printed %q", w.String())
			}
		})
	}
}

func TestSetupMarksArgumentErrors(t *testing.T) {
	root := &cobra.Command{Use: "x"}
	root.AddCommand(&cobra.Command{Use: "one ARG", Args: cobra.ExactArgs(1), RunE: func(*cobra.Command, []string) error { return nil }})
	Setup(root)
	root.SetArgs([]string{"one"})
	root.SetOut(&bytes.Buffer{})
	err := root.Execute()
	if !IsUsage(err) {
		t.Errorf("missing argument: %v is not a usage error", err)
	}
	if _, err := (&Logging{Format: "xml"}).Logger(&bytes.Buffer{}, slog.LevelWarn); !IsUsage(err) {
		t.Errorf("bad --log-format: %v", err)
	}
}

func TestSetupAddsHelpAndCompletionWithExamples(t *testing.T) {
	root := &cobra.Command{Use: "x", Short: "x", Example: "  x one"}
	root.AddCommand(&cobra.Command{Use: "one", Short: "one", Example: "  x one", RunE: func(*cobra.Command, []string) error { return nil }})
	root.AddCommand(&cobra.Command{Use: "two", RunE: func(*cobra.Command, []string) error { return nil }})
	var out bytes.Buffer
	root.SetOut(&out)
	Setup(root)
	got := MissingHelp(root)
	want := []string{"x two: no Short", "x two: no Example"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MissingHelp (-want +got):\n%s", diff)
	}
	root.SetArgs([]string{"completion", "bash"})
	if err := root.Execute(); err != nil || !strings.Contains(out.String(), "bash completion") {
		t.Errorf("completion bash: %v\n%.200s", err, out.String())
	}
}
