// Command plasma-node manages the platforms and nodes of a Plasma project:
// platforms/<platform>/platform.yaml and platforms/<platform>/nodes/<host>.yaml.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	plasmanode "github.com/plasmactl/plasma-node"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageError marks bad usage: exit code 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// app is the state the commands share.
type app struct {
	dir       string
	logFormat string
	out, err  io.Writer
	log       *slog.Logger
}

func (a *app) project(ctx context.Context) (*plasmanode.Project, error) {
	dir := a.dir
	if dir == "" {
		dir = os.Getenv("PLASMA_NODE_DIR")
	}
	if dir == "" {
		d, err := plasmanode.FindProjectDir(".")
		if err != nil {
			return nil, err
		}
		dir = d
	}
	return plasmanode.OpenProject(ctx, dir, plasmanode.Options{Logger: a.log})
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{out: stdout, err: stderr}
	root := &cobra.Command{
		Use:           "plasma-node",
		Short:         "Manage the platforms and nodes of a Plasma project",
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			var h slog.Handler
			switch a.logFormat {
			case "text":
				h = slog.NewTextHandler(stderr, nil)
			case "json":
				h = slog.NewJSONHandler(stderr, nil)
			default:
				return usageError{fmt.Errorf("--log-format %q: want text or json", a.logFormat)}
			}
			a.log = slog.New(h)
			return nil
		},
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().StringVar(&a.dir, "dir", "", "project folder holding platforms/ (env PLASMA_NODE_DIR; default: the nearest folder upward that holds platforms/, else the current one)")
	root.PersistentFlags().StringVar(&a.logFormat, "log-format", "text", "log format on stderr: text or json")
	root.AddCommand(a.addCmd(), a.allocateCmd(), a.listCmd(), a.showCmd(), versionCmd())
	for _, c := range root.Commands() {
		c.Aliases = append(c.Aliases, "node:"+c.Name())
		c.Args = wrapArgs(c.Args)
	}
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "plasma-node:", err)
	var ue usageError
	if errors.As(err, &ue) || plasmanode.IsUsageError(err) || isCobraUsage(err) {
		return 2
	}
	return 1
}

// wrapArgs marks argument-count errors as usage errors.
func wrapArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		return nil
	}
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{fmt.Errorf("%w; usage: %s", err, cmd.UseLine())}
		}
		return nil
	}
}

// isCobraUsage recognises cobra's unknown-command error, which has no type.
func isCobraUsage(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command ")
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the module version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := "(devel)"
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				v = bi.Main.Version
			}
			fmt.Fprintln(cmd.OutOrStdout(), "plasma-node", v)
			return nil
		},
	}
}
