package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/plasmactl/plasma-node/pxe/store/postgres"
	"github.com/plasmactl/plasma-node/pxe/tlscert"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
)

func (a *app) unregisterCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "unregister NAME",
		Short:   "Remove a pending registration",
		Example: "  node-provisioner unregister pve3",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := registry.ValidateName(args[0]); err != nil {
				return err
			}
			regs, err := a.registrar()
			if err != nil {
				return err
			}
			if err := regs.Unregister(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Unregistered %s\n", args[0])
			return nil
		},
	}
}

func (a *app) rearmCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "rearm NAME [--force]",
		Short: "Put a consumed registration whose answer was not delivered back to pending",
		Example: `  node-provisioner list          # STATE undelivered: the connection died as the answer was sent
  node-provisioner rearm pve3`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := registry.ValidateName(args[0]); err != nil {
				return err
			}
			stores, err := a.stores(cmd.Context())
			if err != nil {
				return err
			}
			err = stores.Registrations().Rearm(cmd.Context(), args[0], registry.RearmOptions{Force: force})
			if errors.Is(err, registry.ErrDelivered) {
				return usageError(fmt.Errorf("%w (--force re-arms it anyway)", err))
			}
			if errors.Is(err, registry.ErrNotFound) {
				return usageError(err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Re-armed %s: pending again\n", args[0])
			return nil
		},
	}
	c.Flags().BoolVar(&force, "force", false, "re-arm also a registration whose answer was delivered (its machine installs again)")
	return c
}

func (a *app) listCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "list",
		Short: "List registrations: pending, consumed and installed",
		Example: `  node-provisioner list
  node-provisioner list -o json
  node-provisioner list -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			// The broken ones are said once, as errors (below), not also
			// as the store's warnings.
			regs, err := a.registrarWith(a.logging.Reported(a.log))
			if err != nil {
				return err
			}
			if err := a.stateDirExists(regs); err != nil {
				return err
			}
			st, err := regs.Nodes(cmd.Context())
			if err != nil {
				return err
			}
			broken := &cli.BrokenEntries{Noun: "registration"}
			for _, s := range st {
				if s.State == backend.StateBroken {
					broken.Errs = append(broken.Errs, s.Problem)
				}
			}
			if len(broken.Errs) == 0 {
				broken = nil
			}
			if output != "table" {
				if err := cli.WriteData(a.out, output, append([]backend.Node{}, st...)); err != nil || broken == nil {
					return err
				}
				return broken // exit 1: the list is incomplete
			}
			if len(st) == 0 {
				fmt.Fprintln(a.out, "No registrations.")
				return nil
			}
			tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSTATE\tMACS\tBOOT DISK\tPOOLS\tBOOT")
			for _, s := range st {
				if s.Problem != "" {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.State, s.Problem)
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.State, dash(strings.Join(s.MACs, ",")), s.BootDisk, dash(strings.Join(s.Pools, " ")), bootColumn(s))
			}
			if err := tw.Flush(); err != nil || broken == nil {
				return err
			}
			return broken // exit 1: the list is incomplete
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return c
}

// siteKeys loads the SSH keys every answer carries: the given files, else
// the running user's default public keys.
func (a *app) siteKeys(files []string) (registry.Site, error) {
	if len(files) == 0 {
		if home, err := os.UserHomeDir(); err == nil {
			files = registry.DefaultSSHKeyFiles(home)
		}
		if len(files) == 0 {
			a.log.Warn("no SSH public key found (~/.ssh/id_ed25519.pub, id_rsa.pub): answers carry none unless site.json or a registration has some; day-2 access is by key")
			return registry.Site{}, nil
		}
	}
	keys, err := registry.LoadSSHKeys(files)
	if err != nil {
		return registry.Site{}, usageError(fmt.Errorf("--ssh-key: %w", err))
	}
	return registry.Site{SSHKeys: keys}, nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// nodes lists the registrations, of --server or of the state folder.
func (a *app) nodes(ctx context.Context) ([]backend.Node, error) {
	regs, err := a.registrar()
	if err != nil {
		return nil, err
	}
	return regs.Nodes(ctx)
}

// registrar returns where registrations go: --server's API, else the
// state folder.
func (a *app) registrar() (registrar.Registrar, error) { return a.registrarWith(a.log) }

// registrarWith is registrar whose local store logs to log:
// registrar.Open of --server (with the token of registrar.EnvToken) or of the
// state folder.
func (a *app) registrarWith(log *slog.Logger) (registrar.Registrar, error) {
	if a.server != "" {
		log = a.log // the client's log, as the other remote commands'
	} else if a.local != nil {
		return a.local, nil
	}
	r, err := registrar.Open(registrar.Where{Server: a.server, Token: os.Getenv(registrar.EnvToken), Fingerprint: a.fingerprint,
		Dir: a.stateDir, SecretsDir: a.secretsDir, Store: a.store, KeyFile: a.storeKey, Openers: postgres.Openers(), Logger: log})
	switch {
	case errors.Is(err, registrar.ErrNoToken):
		return nil, usageError(fmt.Errorf("--server %s needs the API token in %s (node-provisioner token create on the server makes one)", a.server, registrar.EnvToken))
	case errors.Is(err, tlscert.ErrInvalidFingerprint):
		return nil, usageError(fmt.Errorf("--fingerprint: %w", err))
	case err != nil && a.server != "":
		return nil, usageError(fmt.Errorf("--server: %w", err))
	}
	if l, ok := r.(*registrar.Local); ok {
		a.local = l
	}
	return r, err
}

// localState returns the state folder on this host, the same one for
// every command of the process.
func (a *app) localState() *registrar.Local {
	if a.local == nil {
		a.local = &registrar.Local{Dir: a.stateDir, SecretsDir: a.secretsDir, Store: a.store, KeyFile: a.storeKey, Openers: postgres.Openers(), Logger: a.log}
	}
	return a.local
}

// stores returns the stores of --state-dir, opened once for the process
// (creating the folder): its one writer of each.
func (a *app) stores(ctx context.Context) (*store.Stores, error) { return a.localState().Stores(ctx) }

// stateDirExists refuses a state folder that does not exist when regs
// reads it, so that a mistyped --state-dir is not read as "no
// registrations".
func (a *app) stateDirExists(regs registrar.Registrar) error {
	l, ok := regs.(*registrar.Local)
	if !ok || l.Store != "" {
		return nil
	}
	if _, err := os.Stat(a.stateDir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the state folder %s does not exist: nothing is registered there (register creates it; --state-dir or $%s names another)", a.stateDir, "NODE_PROVISIONER_STATE_DIR")
	}
	return nil
}

// bootColumn is list's BOOT: the registration's boot method (with the
// media answer of virtual media), "site" when it names none.
func bootColumn(n backend.Node) string {
	switch {
	case n.BootMethod == "":
		return "site"
	case n.MediaAnswer != "":
		return n.BootMethod + "/" + n.MediaAnswer
	}
	return n.BootMethod
}
