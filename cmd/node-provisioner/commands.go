package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
)

func (a *app) registerCmd() *cobra.Command {
	var (
		macs, pools, keys   []string
		serial, uuid, disk  string
		fromDiscovered      string
		replace, secureBoot bool
		bf                  bmcFlags
		sf                  staticFlags
	)
	c := &cobra.Command{
		Use:   "register NAME [--mac M]... [--serial S] [--uuid U] [--from-discovered MAC|SERIAL] [--boot-disk SERIAL|NAME|any] [--pool SPEC]... [--ssh-key FILE]... [--bmc URL --bmc-user U --bmc-password-file F] [--address CIDR --gateway IP --dns IP [--management-mac M]] [--secure-boot] [--replace]",
		Short: "Register a node: the allowlist entry its installer's request must match",
		Example: `  node-provisioner register pve3 --mac aa:bb:cc:dd:ee:ff --boot-disk 25414A800205 \
      --pool 'tanka1=single:50026B73842AD86F'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if fromDiscovered != "" {
				var err error
				flagPins := len(macs) > 0 || serial != "" || uuid != ""
				if macs, serial, uuid, err = a.discoveredPins(cmd.Context(), fromDiscovered, disk, flagPins); err != nil {
					return err
				}
			}
			r := registry.Registration{Name: args[0], Serial: serial, UUID: uuid, SecureBoot: secureBoot, Created: time.Now().UTC()}
			if err := registry.ValidateName(r.Name); err != nil {
				return err
			}
			for _, m := range macs {
				n, err := registry.NormalizeMAC(m)
				if err != nil {
					return fmt.Errorf("--mac: %w", err)
				}
				r.MACs = append(r.MACs, n)
			}
			bd, err := registry.ParseBootDisk(disk)
			if err != nil {
				return fmt.Errorf("--boot-disk: %w", err)
			}
			r.BootDisk = bd
			for _, p := range pools {
				dp, err := registry.ParsePoolSpec(p)
				if err != nil {
					return fmt.Errorf("--pool: %w", err)
				}
				r.Pools = append(r.Pools, dp)
			}
			if len(keys) > 0 {
				if r.SSHKeys, err = registry.LoadSSHKeys(keys); err != nil {
					return usageError(fmt.Errorf("--ssh-key: %w", err))
				}
			}
			if r.Network, err = sf.network(cmd.Flags()); err != nil {
				return err
			}
			bmcPassword := ""
			if r.BMC, bmcPassword, err = bf.registration(cmd.Flags()); err != nil {
				return err
			}
			if err := r.Validate(); err != nil {
				return err
			}
			// The command says what a re-registration changed
			// (warnChanges): the store's own warnings would say it twice.
			regs, err := a.registrarWith(a.logging.Reported(a.log))
			if err != nil {
				return err
			}
			var res registry.RegisterResult
			if r.BMC != nil {
				// Kept 0600 beside the node secrets (the server's, with
				// --server) once the registration is accepted.
				res, err = regs.RegisterWithBMCPassword(cmd.Context(), r, registry.RegisterOptions{Replace: replace}, bmcPassword)
			} else {
				res, err = regs.Register(cmd.Context(), r, registry.RegisterOptions{Replace: replace})
			}
			if errors.Is(err, registry.ErrPinTaken) {
				return fmt.Errorf("%w; --replace moves it", err)
			}
			if err != nil {
				return err
			}
			a.warnChanges(r, res)
			verb := "Registered"
			if res.Previous != nil {
				verb = "Re-registered (replacing the earlier registration)"
			}
			fmt.Fprintf(a.out, "%s %s: boot disk %s", verb, r.Name, r.BootDisk)
			if r.Network != nil {
				fmt.Fprintf(a.out, "; static address %s on %s", r.Network.CIDR, r.ManagementMAC())
			}
			if len(r.MACs) == 0 && r.Serial == "" && r.UUID == "" {
				fmt.Fprint(a.out, "; pins nothing, so it only answers while it is the only pending registration")
			}
			fmt.Fprintln(a.out)
			return nil
		},
	}
	f := c.Flags()
	f.StringArrayVar(&macs, "mac", nil, "MAC address the node's installer posts (repeatable)")
	f.StringVar(&serial, "serial", "", "pin the node's DMI system serial")
	f.StringVar(&uuid, "uuid", "", "pin the node's DMI system UUID")
	f.StringVar(&fromDiscovered, "from-discovered", "", "take the pins (MACs, DMI serial and UUID) from the discovered machine of this MAC or serial (see discovered); --boot-disk must then be one of its disks' serials")
	f.StringVar(&disk, "boot-disk", "", "disk for the system: a serial (lsblk -o NAME,SERIAL), a kernel name (sda), or any; omitted: chosen on the console")
	f.StringArrayVar(&pools, "pool", nil, "data pool NAME=LAYOUT:DISK[,DISK...], layouts single, stripe, mirror, raidz, raidz2 (repeatable)")
	f.StringArrayVar(&keys, "ssh-key", nil, "public key file for root's authorized_keys on this node (repeatable)")
	bf.bind(f)
	sf.bind(f)
	f.BoolVar(&secureBoot, "secure-boot", false, "boot this machine through the Secure Boot chain (signed shim, grub and kernel) even when the window offers others iPXE: its firmware has Secure Boot on")
	f.BoolVar(&replace, "replace", false, "move a MAC, serial or UUID pin another pending registration holds to this one")
	return c
}

// warnChanges says on stderr what a re-registration changed and which
// pins it took from other registrations, so that a dropped --boot-disk or
// a moved MAC is seen.
func (a *app) warnChanges(r registry.Registration, res registry.RegisterResult) {
	if res.Previous != nil {
		var parts []string
		for _, c := range registry.Changes(*res.Previous, r) {
			parts = append(parts, fmt.Sprintf("%s %s -> %s", c.Field, c.Old, c.New))
		}
		if len(parts) == 0 {
			parts = []string{"nothing changed"}
		}
		fmt.Fprintf(a.errw, "node-provisioner: warning: %s was registered already and is replaced: %s\n", r.Name, strings.Join(parts, "; "))
	}
	for _, m := range res.Moved {
		if m.Removed {
			fmt.Fprintf(a.errw, "node-provisioner: warning: %s moved from %s to %s; %s pinned nothing else and was removed\n", m.Pin, m.From, r.Name, m.From)
			continue
		}
		fmt.Fprintf(a.errw, "node-provisioner: warning: %s moved from %s to %s\n", m.Pin, m.From, r.Name)
	}
}

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
			stores, err := a.stores()
			if err != nil {
				return err
			}
			err = stores.Registrations().Rearm(cmd.Context(), args[0], force)
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
			fmt.Fprintln(tw, "NAME\tSTATE\tMACS\tBOOT DISK\tPOOLS")
			for _, s := range st {
				if s.Problem != "" {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.State, s.Problem)
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.State, dash(strings.Join(s.MACs, ",")), s.BootDisk, dash(strings.Join(s.Pools, " ")))
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
// registrar.Open of --server (with the token of TokenEnv) or of the
// state folder.
func (a *app) registrarWith(log *slog.Logger) (registrar.Registrar, error) {
	if a.server != "" {
		log = a.log // the client's log, as the other remote commands'
	} else if a.local != nil {
		return a.local, nil
	}
	r, err := registrar.Open(registrar.Where{Server: a.server, Token: os.Getenv(TokenEnv), Fingerprint: a.fingerprint,
		Dir: a.stateDir, SecretsDir: a.secretsDir, Store: a.store, KeyFile: a.storeKey, Openers: postgres.Openers(), Logger: log})
	switch {
	case errors.Is(err, registrar.ErrNoToken):
		return nil, usageError(fmt.Errorf("--server %s needs the API token in %s (node-provisioner token create on the server makes one)", a.server, TokenEnv))
	case err != nil && a.server != "" && strings.Contains(err.Error(), "fingerprint"):
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
func (a *app) stores() (*store.Stores, error) { return a.localState().Stores() }
