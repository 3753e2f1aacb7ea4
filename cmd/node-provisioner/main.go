// Command node-provisioner hands the Proxmox VE automated installer a
// per-node answer.toml, once, to registered machines only.
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

	"github.com/plasmactl/plasma-node/answer"
)

// DefaultStateDir is where registrations, assets and the event log live.
const DefaultStateDir = "/var/lib/node-provisioner"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

type app struct {
	stateDir, secretsDir, logFormat string
	out, errw                       io.Writer
	log                             *slog.Logger
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{out: stdout, errw: stderr}
	root := &cobra.Command{
		Use:           "node-provisioner",
		Short:         "Serve the Proxmox VE automated installer one answer per registered node",
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			switch a.logFormat {
			case "text":
				a.log = slog.New(slog.NewTextHandler(stderr, nil))
			case "json":
				a.log = slog.New(slog.NewJSONHandler(stderr, nil))
			default:
				return usageError{fmt.Errorf("--log-format %q: want text or json", a.logFormat)}
			}
			if a.stateDir == "" {
				a.stateDir = envOr("NODE_PROVISIONER_STATE_DIR", DefaultStateDir)
			}
			if a.secretsDir == "" {
				a.secretsDir = os.Getenv("NODE_PROVISIONER_SECRETS_DIR")
			}
			if a.secretsDir == "" {
				d, err := answer.DefaultSecretsDir()
				if err != nil {
					return fmt.Errorf("--secrets-dir: %w", err)
				}
				a.secretsDir = d
			}
			return nil
		},
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.stateDir, "state-dir", "", "state folder: registrations, assets, event log (env NODE_PROVISIONER_STATE_DIR; default "+DefaultStateDir+")")
	pf.StringVar(&a.secretsDir, "secrets-dir", "", "folder for generated root passwords (env NODE_PROVISIONER_SECRETS_DIR; default ~/.node-secrets)")
	pf.StringVar(&a.logFormat, "log-format", "text", "log format on stderr: text or json")
	root.AddCommand(a.registerCmd(), a.unregisterCmd(), a.listCmd(), a.serveCmd(), versionCmd())
	for _, c := range root.Commands() {
		if c.Args != nil {
			check := c.Args
			c.Args = func(cmd *cobra.Command, args []string) error {
				if err := check(cmd, args); err != nil {
					return usageError{fmt.Errorf("%w; usage: %s", err, cmd.UseLine())}
				}
				return nil
			}
		}
	}
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "node-provisioner:", err)
	var ue usageError
	if errors.As(err, &ue) || errors.Is(err, answer.ErrInvalidRegistration) || errors.Is(err, answer.ErrInvalidSSHKey) ||
		strings.HasPrefix(err.Error(), "unknown command ") {
		return 2
	}
	return 1
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
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
			fmt.Fprintln(cmd.OutOrStdout(), "node-provisioner", v)
			return nil
		},
	}
}
