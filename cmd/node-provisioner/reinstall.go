package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/window"
)

func (a *app) reinstallCmd() *cobra.Command {
	var (
		force, wait, wipe bool
		timeout           time.Duration
	)
	c := &cobra.Command{
		Use:   "reinstall NAME [--wipe-data] [--force] [--wait [--timeout D]]",
		Short: "Install a node's machine again: its registration re-armed with a new root password, its BMC booting it",
		Long: `Re-arm an installed node's registration as a new one-shot, with its pins and
its BMC: the machine's next netboot gets the installer again (its script said
exit while it was installed), for that one install, and an answer with a new
root password; the old one is kept as <name>.previous.pw until the new install
reports in. With a BMC, its next boot is set to PXE (once) and it is powered
on or cycled, as boot does: the provisioning window must be open.

Its data pools are kept: the new install's first-boot script imports the
pools it finds on their disks, and creates a pool only on disks that hold
none. --wipe-data creates them anew, destroying what they hold; it asks
for a typed "yes".

It asks for confirmation at a terminal; elsewhere it needs --force. With
--wait it then prints the machine's steps from the window's events (as
plasma-node provision --boot does) until it is installed again; Ctrl-C or
--timeout stop waiting and power nothing off.`,
		Example: `  node-provisioner enable --ttl 2h --dhcp-interface eth0
  node-provisioner reinstall pve3
  node-provisioner reinstall pve3 --wipe-data --force`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := registry.ValidateName(name); err != nil {
				return usageError(err)
			}
			if !force {
				if err := confirm(cmd, name, wipe); err != nil {
					return err
				}
			}
			if wait && timeout <= 0 {
				return usageError(fmt.Errorf("--timeout %s: want a positive duration such as 45m", timeout))
			}
			n, err := a.node()
			if err != nil {
				return err
			}
			var watch *registrar.InstallWatch
			if wait {
				if watch, err = registrar.WatchInstall(cmd.Context(), n, name); err != nil {
					return err
				}
				defer watch.Stop()
			}
			res, err := n.Reinstall(cmd.Context(), name, api.ReinstallRequest{WipeData: wipe})
			var failed *regbackend.BootFailedError
			switch {
			case errors.Is(err, registry.ErrNotFound), errors.Is(err, registry.ErrInvalidRegistration):
				return usageError(err)
			case errors.Is(err, window.ErrClosed):
				return fmt.Errorf("reinstall %s: the provisioning window is closed; open it first (node-provisioner enable), so that the machine its BMC boots is answered", name)
			case errors.As(err, &failed):
				return fmt.Errorf("reinstall %s: re-armed, but its BMC's boot failed (node-provisioner boot %s when that is fixed): %w", name, name, failed.Err)
			case err != nil:
				return err
			}
			data := ""
			if wipe {
				data = ", its data pools to be created anew"
			}
			if res.Boot == nil {
				fmt.Fprintf(a.out, "%s: re-armed for one install with a new root password%s; netboot its machine\n", name, data)
			} else {
				how := "powered on"
				if res.Boot.Cycled {
					how = "power-cycled"
				}
				fmt.Fprintf(a.out, "%s: re-armed for one install with a new root password%s; next boot %s (%s, once) and %s via %s\n", name, data, res.Boot.Next(), res.Boot.Mode, how, res.Boot.Protocol)
			}
			if watch == nil {
				return nil
			}
			return waitInstall(cmd.Context(), watch, a.out, name, timeout)
		},
	}
	c.Flags().BoolVar(&force, "force", false, "reinstall without asking (needed where there is no terminal)")
	c.Flags().BoolVar(&wipe, "wipe-data", false, `create the data pools anew, destroying what they hold (asks for a typed "yes")`)
	c.Flags().BoolVar(&wait, "wait", false, "follow the machine until it is installed again, printing its steps")
	cli.DurationVar(c.Flags(), &timeout, "timeout", defaultReinstallWait, "with --wait, how long to wait for the install")
	return c
}

// confirm asks at a terminal whether to reinstall name; without one it
// is a usage error naming --force, and anything but yes declines (exit 1).
// Wiping data takes the typed word yes.
func confirm(cmd *cobra.Command, name string, wipe bool) error {
	if !cli.IsTerminal(cmd.InOrStdin()) {
		return usageError(fmt.Errorf("reinstall %s needs confirmation: run it at a terminal, or give --force", name))
	}
	p := cli.NewLinePrompter(cmd.InOrStdin(), cmd.ErrOrStderr())
	q := fmt.Sprintf("Reinstall %s? Its machine installs again, over its boot disk; its data pools are kept [y/N]: ", name)
	if wipe {
		q = fmt.Sprintf("Reinstall %s and WIPE its data pools? Its machine installs again over its boot disk, and its data pools are created anew, destroying what they hold. Type \"yes\" to confirm: ", name)
	}
	ans, err := p.Prompt(cmd.Context(), q)
	if err != nil {
		return err
	}
	a := strings.ToLower(strings.TrimSpace(ans))
	if a != "yes" && (wipe || a != "y") {
		return fmt.Errorf("reinstall %s declined; nothing was re-armed", name)
	}
	return nil
}
