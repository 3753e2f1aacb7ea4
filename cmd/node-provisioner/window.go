package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/daemon"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/window"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/plasmactl/plasma-node/pxe"
)

func (a *app) enableCmd() *cobra.Command {
	var o serveOptions
	c := &cobra.Command{
		Use:   "enable [--ttl DURATION] [--http ADDR] [--bootfile snponly.efi|ipxe.efi] [--dhcp-hook CMD]",
		Short: "Open the provisioning window in the background (a transient systemd unit, or a detached process)",
		Long: "Open the provisioning window in the background (a transient systemd unit, or a detached process).\n" +
			"When a node-provisioner daemon runs on the state folder, the daemon's window is opened through its API instead,\n" +
			"with the token in " + registrar.EnvToken + " (admin scope) and the daemon's window settings (only --ttl, --secure-boot and --discover are taken).",
		Example: `  node-provisioner enable --ttl 2h
  node-provisioner enable --http 127.0.0.1:8090 --ttl 10m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, running, err := a.localDaemon()
			if err != nil {
				return err
			}
			if running {
				// The daemon's window settings are its own: refused
				// before they are checked as a window of this process.
				if err := remoteOnlyTTL(changed(cmd), fmt.Sprintf("the daemon running on this state folder (pid %d) opens the window, and", r.PID)); err != nil {
					return err
				}
			}
			if _, err := o.check(); err != nil {
				return err
			}
			if c, err := a.remote(); err != nil || c != nil {
				if err != nil {
					return err
				}
				return a.enableRemote(cmd, c, o.cfg, "with --server")
			}
			if running {
				op, _, err := a.via(daemon.Local{Local: a.localState()}, true, "admin")
				if err != nil {
					return err
				}
				return a.enableRemote(cmd, op.(registrar.Remote).Client, o.cfg, "")
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			// What the window said as it started: its warnings, or why it
			// could not (a port taken), in this command's voice.
			w, said, err := daemon.Enable(cmd.Context(), daemon.Background{Executable: exe, StateDir: a.stateDir, SecretsDir: a.secretsDir,
				Store: a.store, KeyFile: a.storeKey, ServeArgs: serveArgs(cmd.Flags()), TTL: o.cfg.TTL, Logger: a.log}, "node-provisioner: ")
			if errors.Is(err, window.ErrOpen) {
				left := err.Error()
				if w != nil {
					left = fmt.Sprintf("%s, %s left", w.URL, w.Left(time.Now()))
				}
				if given := windowFlags(changed(cmd)); len(given) > 0 {
					// The open window keeps its settings: saying it opened
					// with the new ones would be wrong.
					return fmt.Errorf("the provisioning window is already open (%s) and keeps its settings; %s would need a new window: disable it first", left, strings.Join(given, ", "))
				}
				fmt.Fprintf(a.out, "The provisioning window is already open: %s\n", left)
				return nil
			}
			if err != nil {
				// Its warnings on their own lines; the rest is why.
				var why []string
				for _, l := range said {
					if strings.HasPrefix(l, "warning: ") {
						fmt.Fprintln(a.errw, "node-provisioner: "+l)
					} else {
						why = append(why, l)
					}
				}
				if len(why) > 0 {
					return fmt.Errorf("the window did not open: %s", strings.Join(why, "; "))
				}
				return err
			}
			for _, l := range said {
				fmt.Fprintln(a.errw, "node-provisioner: "+l)
			}
			fmt.Fprintf(a.out, "Provisioning window open: %s until %s (pid %d)\n", w.URL, w.Deadline.Format(time.RFC3339), w.PID)
			return nil
		},
	}
	o.bind(c.Flags())
	return c
}

// serveArgs renders the flags given to enable as serve's command line,
// with key files made absolute (the window may run in another folder).
func serveArgs(f *pflag.FlagSet) []string {
	var out []string
	f.Visit(func(fl *pflag.Flag) {
		vals := []string{fl.Value.String()}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			vals = sv.GetSlice()
		}
		for _, v := range vals {
			if a, err := filepath.Abs(v); err == nil && fl.Name == "ssh-key" {
				v = a
			}
			out = append(out, "--"+fl.Name+"="+v)
		}
	})
	return out
}

func (a *app) disableCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "disable",
		Short:   "Close the provisioning window (idempotent)",
		Example: "  node-provisioner disable",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := a.node()
			if err != nil {
				return err
			}
			if n, _, err = a.via(n, true, "admin"); err != nil {
				return err
			}
			closed, err := n.Disable(cmd.Context())
			if err != nil {
				return err
			}
			if closed {
				fmt.Fprintln(a.out, "Provisioning window closed")
			} else {
				fmt.Fprintln(a.out, "No provisioning window was open")
			}
			return nil
		},
	}
}

// changed returns the names of cmd's own flags given.
func changed(cmd *cobra.Command) []string {
	var set []string
	cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			set = append(set, f.Name)
		}
	})
	return set
}

// enableRemote opens the window of a daemon through c; where, when not
// empty, says how the daemon was named for refusing window settings.
func (a *app) enableRemote(cmd *cobra.Command, c *client.Client, cfg pxe.Config, where string) error {
	if where != "" {
		if err := remoteOnlyTTL(changed(cmd), where); err != nil {
			return err
		}
	}
	w, err := c.OpenWindowWith(cmd.Context(), cfg.TTL, client.WindowOptions{SecureBoot: cfg.SecureBoot, Discover: cfg.Discover})
	if errors.Is(err, window.ErrOpen) {
		if slices.Contains(changed(cmd), "ttl") {
			return fmt.Errorf("the provisioning window is already open (%v) and keeps its deadline; --ttl would need a new window: disable it first", err)
		}
		fmt.Fprintf(a.out, "The provisioning window is already open: %v\n", err)
		return nil
	}
	if err != nil {
		return err
	}
	// What the daemon's window warned of as it started, in this
	// command's voice, as a window of this process would say it.
	for _, l := range w.Warnings {
		fmt.Fprintln(a.errw, "node-provisioner: warning: "+l)
	}
	fmt.Fprintf(a.out, "Provisioning window open: %s until %s (pid %d)\n", w.URL, w.Deadline.Format(time.RFC3339), w.PID)
	return nil
}

// windowFlags spells the names of the window settings given.
func windowFlags(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "--" + n
	}
	return out
}
