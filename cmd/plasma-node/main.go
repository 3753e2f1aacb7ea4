package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/internal/nodecmd"
)

func main() {
	// A command runs for a moment and reads many small YAML files (list
	// of 10 000 nodes: a third of its CPU went to the collector at the
	// default GOGC of 100). Collect at 400 % growth, within a soft limit
	// of 512 MiB, unless the environment says otherwise.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(512 << 20)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// app is the state the commands share.
type app struct {
	dir            string
	logging        cli.Logging
	provisionerDir string
	tofuLog        string
	output         string
	out            io.Writer
	log            *slog.Logger
}

// env is what the shared command runner needs from cmd.
func (a *app) env(cmd *cobra.Command) nodecmd.Env {
	return nodecmd.Env{Dir: a.dir, ProvisionerDir: a.provisionerDir, Logger: a.log, Stdin: cmd.InOrStdin(), Stdout: a.out, Stderr: cmd.ErrOrStderr(),
		Verbose: a.logging.Verbose, TofuLog: a.tofuLog, Output: a.output}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{out: stdout}
	a.logging.Voice = "plasma-node"
	root := newRoot(a, stdout, stderr)
	root.SetArgs(args)
	return cli.Exit(stderr, "plasma-node", root.ExecuteContext(ctx), plasmanode.IsUsageError)
}

// newRoot returns the command tree.
func newRoot(a *app, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "plasma-node",
		Short: "Manage the platforms and nodes of a Plasma project",
		Example: `  plasma-node add demo --provider hetzner --domain example.com
  plasma-node provision demo -z foundation.cluster.control:cx22:3
  plasma-node list demo
  source <(plasma-node completion bash)`,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := cli.RefuseEmpty(cmd.Flags()); err != nil {
				return err
			}
			a.log, err = a.logging.Logger(stderr, slog.LevelWarn)
			return err
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&a.dir, "dir", "", "project folder holding platforms/ (env PLASMA_NODE_DIR; default: the nearest folder upward that holds platforms/, else the current one)")
	a.logging.AddFlags(root.PersistentFlags(), "tofu's own output")
	root.PersistentFlags().StringVar(&a.provisionerDir, "provisioner-dir", "", "pxe platforms: node-provisioner's state folder (default: env "+plasmanode.EnvProvisionerDir+
		", else platform.yaml infrastructure.provisioner_dir, else "+plasmanode.DefaultProvisionerDir+")")
	root.AddCommand(a.addCmd(), a.allocateCmd(), a.listCmd(), a.showCmd(), a.provisionCmd(), a.joinCmd(), a.destroyCmd(), a.deleteCmd(),
		a.registerCmd(), a.deallocateCmd(), a.queryCmd(), a.validateCmd(), a.knownHostsCmd(), a.refreshCmd(), a.reinstallCmd(), cli.VersionCommand("plasma-node"))
	for _, c := range root.Commands() {
		c.Aliases = append(c.Aliases, "node:"+c.Name())
	}
	a.addCompletion(root)
	cli.Setup(root)
	return root
}
