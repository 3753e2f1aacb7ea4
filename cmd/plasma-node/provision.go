package main

import (
	"github.com/spf13/cobra"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/internal/nodecmd"
)

func (a *app) provisionCmd() *cobra.Command {
	var o plasmanode.ProvisionOptions
	c := &cobra.Command{
		Use:   "provision PLATFORM -z ZONE:TYPE:COUNT... [--dry-run [-o json]] [--auto-approve] [--allow-delete] [--allow-destructive-update] [--tofu PATH]",
		Short: "Make the platform's servers match its pools through OpenTofu, and write their node files",
		Long: `Each -z spec becomes (or updates) a pool named after the zone's last segment.
Existing nodes are adopted by server id, so a second identical run changes
nothing. The plan is shown classified; --dry-run stops there, and with
-o json or yaml prints it as a document (apiVersion plasma-node/v1, kind
Plan). A dry run without the provider's credentials, or without tofu, shows
the plan derived offline from the pools and the node files, and says so.

Lowering a pool's count deletes its highest-numbered servers
(<platform>-<pool>-<NNN>) and removes their node files; those deletes need a
typed "yes", or --allow-delete beside --auto-approve: --auto-approve alone
never deletes a server. A count of 0 in platform.yaml deletes every server of
the pool under the same rule (a -z spec's count must be at least 1). Any
other delete, and any replacement, is refused: use destroy.

On a platform whose provider is pxe, no tofu runs: each new node is a
machine of the hardware lists (--hardware FILE, then pools.<pool>.hardware
in platform.yaml), registered with node-provisioner in its state folder or
through its API. With --boot each new machine is then set to boot PXE once
and powered on through its BMC, and (--wait, the default with --boot) the
command follows them until all are installed, printing each step (offer,
ipxe, kernel, answer, installed); it exits 0 only when all are installed.
Ctrl-C stops waiting, says what is still pending and powers nothing off.`,
		Example: `  plasma-node provision demo -z foundation.cluster.control:cx22:3 -z cognition.data:cx32:2
  plasma-node provision demo --dry-run
  plasma-node provision demo --dry-run -o json
  plasma-node provision demo -z foundation.cluster.control:cx22:2 --auto-approve --allow-delete
  plasma-node provision metal -z foundation.cluster.control:pve:3 --hardware hardware.yaml --provisioner-dir /var/lib/node-provisioner
  plasma-node provision metal -z foundation.cluster.control:pve:3 --hardware hardware.yaml --auto-approve --boot --timeout 1h`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Platform = args[0]
			if err := nodecmd.CheckBoot(&o, cmd.Flags().Changed("wait")); err != nil {
				return err
			}
			return nodecmd.Provision(cmd.Context(), a.env(cmd), o)
		},
	}
	f := c.Flags()
	f.BoolVar(&o.Boot, "boot", false, "provider pxe: boot the new machines into the installer through their BMCs (PXE once, power on)")
	f.BoolVar(&o.Wait, "wait", false, "with --boot, wait until every new machine is installed, showing its steps (default true with --boot)")
	cli.DurationVar(f, &o.WaitTimeout, "timeout", plasmanode.DefaultWaitTimeout, "with --wait, how long to wait for the machines to be installed")
	f.StringArrayVarP(&o.Specs, "zone", "z", nil, "ZONE:TYPE:COUNT spec, repeatable (default: the pools of platform.yaml)")
	f.BoolVar(&o.DryRun, "dry-run", false, "show the plan and stop: nothing applied, nothing written")
	f.BoolVar(&o.AutoApprove, "auto-approve", false, "apply a plan that destroys nothing without asking")
	f.BoolVar(&o.AllowDestructive, "allow-destructive-update", false, "with --auto-approve, also apply updates that reinstall or wipe servers")
	f.BoolVar(&o.AllowDelete, "allow-delete", false, "with --auto-approve, also delete the servers a lowered count leaves out")
	f.StringVar(&o.TofuPath, "tofu", "", "tofu or terraform binary (default: tofu, then terraform, on PATH)")
	f.StringVar(&a.tofuLog, "tofu-log", "", "append tofu's own output to this file (default: shown with -v only)")
	a.outputFlag(c)
	f.StringVar(&o.HardwareFile, "hardware", "", "provider pxe: YAML or JSON list of the machines new nodes are taken from (machines: [{macs, serial, uuid, boot_disk, data_pools, pool}]), or discovered: node-provisioner's discovery inbox, oldest first")
	return c
}

func (a *app) destroyCmd() *cobra.Command {
	var o plasmanode.DestroyOptions
	c := &cobra.Command{
		Use:   "destroy PLATFORM [--force] [--dry-run] [-o json] [--keep-nodes] [--tofu PATH]",
		Short: "Destroy the platform's servers and remove their node files",
		Long: `Every node with a server id is adopted and destroyed, after a typed "yes"
unless --force; its node file is then removed unless --keep-nodes. For a
manual platform only the node files are removed. --dry-run shows what would
go, named from the node files (tofu does not run), and changes nothing; -o
json or yaml prints it as a document (apiVersion plasma-node/v1, kind Plan).`,
		Example: `  plasma-node destroy demo
  plasma-node destroy demo --force --keep-nodes
  plasma-node destroy demo --dry-run -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Platform = args[0]
			return nodecmd.Destroy(cmd.Context(), a.env(cmd), o)
		},
	}
	f := c.Flags()
	f.BoolVar(&o.Force, "force", false, `destroy without the typed "yes"`)
	f.BoolVar(&o.KeepNodes, "keep-nodes", false, "keep the node files")
	f.BoolVar(&o.DryRun, "dry-run", false, "show what would go and stop: nothing asked, nothing changed")
	a.outputFlag(c)
	f.StringVar(&o.TofuPath, "tofu", "", "tofu or terraform binary (default: tofu, then terraform, on PATH)")
	f.StringVar(&a.tofuLog, "tofu-log", "", "append tofu's own output to this file (default: shown with -v only)")
	return c
}

func (a *app) deleteCmd() *cobra.Command {
	var o plasmanode.DeleteOptions
	c := &cobra.Command{
		Use:   "delete NODE [-e PLATFORM] [--force] [--dry-run] [-o json] [--keep-server] [--tofu PATH]",
		Short: "Delete one node: destroy its server, if it has one, and remove its node file",
		Long: `A node with a server of one of the platform's pools has it adopted and
destroyed through tofu (a pxe platform's pending registration is withdrawn),
after a typed "yes" unless --force, and the pool's count in platform.yaml is
lowered by one; then its node file is removed. A node without a server only
loses its file. --keep-server only forgets the node: its file goes, its
server stays untouched. Either way the typed "yes" is asked first, as
destroy asks, unless --force. --dry-run shows what would go and changes
nothing; -o json or yaml prints it as a document (apiVersion
plasma-node/v1, kind Plan).`,
		Example: `  plasma-node delete demo-web-003
  plasma-node delete demo-web-003 -e demo --force
  plasma-node delete server1 --keep-server --force
  plasma-node delete demo-web-003 --dry-run -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Hostname = args[0]
			return nodecmd.Delete(cmd.Context(), a.env(cmd), o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Platform, "env", "e", "", "platform of the node (default: the one platform that has it)")
	f.BoolVar(&o.Force, "force", false, `delete without the typed "yes"`)
	f.BoolVar(&o.DryRun, "dry-run", false, "show what would go and stop: nothing asked, nothing changed")
	a.outputFlag(c)
	f.BoolVar(&o.KeepServer, "keep-server", false, "only forget the node: remove its file, leave its server")
	f.StringVar(&o.TofuPath, "tofu", "", "tofu or terraform binary (default: tofu, then terraform, on PATH)")
	f.StringVar(&a.tofuLog, "tofu-log", "", "append tofu's own output to this file (default: shown with -v only)")
	return c
}

func (a *app) joinCmd() *cobra.Command {
	var o plasmanode.JoinOptions
	c := &cobra.Command{
		Use:   "join PLATFORM --server-id ID --pool POOL [--hostname H] [--dry-run [-o json]] [--auto-approve] [--allow-destructive-update] [--tofu PATH]",
		Short: "Adopt an existing server into a pool and write its node file",
		Long: `The server is imported with an import-only plan, shown classified and
confirmed, then applied exactly. The hostname is --hostname (written back to
the server's name), else the server's display name when it is a valid
hostname, else the server id. The pool's count in platform.yaml is raised by
one, so a later provision keeps the server. Nothing is written on a dry run
or a failure.`,
		Example: `  plasma-node join demo --server-id 4711 --pool web
  plasma-node join demo --server-id 4711 --pool web --hostname web-extra --auto-approve`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Platform = args[0]
			return nodecmd.Join(cmd.Context(), a.env(cmd), o, cmd.Flags().Changed)
		},
	}
	f := c.Flags()
	f.StringVar(&o.ServerID, "server-id", "", "the provider's id of the server (required)")
	f.StringVar(&o.Pool, "pool", "", "the platform.yaml pool the server joins (required)")
	f.StringVar(&o.Hostname, "hostname", "", "the node's hostname, an RFC 1123 label (default: the server's display name, else its id)")
	f.BoolVar(&o.DryRun, "dry-run", false, "show the plan and stop: nothing applied, nothing written")
	f.BoolVar(&o.AutoApprove, "auto-approve", false, "apply a plan that destroys nothing without asking")
	f.BoolVar(&o.AllowDestructive, "allow-destructive-update", false, "with --auto-approve, also apply updates that reinstall or wipe servers")
	f.StringVar(&o.TofuPath, "tofu", "", "tofu or terraform binary (default: tofu, then terraform, on PATH)")
	f.StringVar(&a.tofuLog, "tofu-log", "", "append tofu's own output to this file (default: shown with -v only)")
	a.outputFlag(c)
	return c
}

func (a *app) reinstallCmd() *cobra.Command {
	var o plasmanode.ReinstallOptions
	c := &cobra.Command{
		Use:   "reinstall NODE [-e PLATFORM] [--wipe-data] [--force] [--wait=false] [--timeout D]",
		Short: "Install a bare-metal node's machine again, with a new root password",
		Long: `The node's installed registration is re-armed as a new one-shot with a new
root password, after a typed "yes" unless --force (without a terminal it
refuses unless --force). Through node-provisioner's API (the platform's
infrastructure.provisioner_url) a machine with a BMC is booted into the
installer, PXE once and a power cycle, and (--wait, the default) its steps
are printed as provision --boot prints them until it is installed again;
then its node file is refreshed with the installed address and host keys.
With a local state folder the registration is re-armed and the machine
installs at its next netboot. Ctrl-C stops waiting and powers nothing off.
Its data pools are kept (the new install imports the pools it finds on
their disks); --wipe-data creates them anew, destroying what they hold.`,
		Example: `  plasma-node reinstall metal-control-001
  plasma-node reinstall metal-control-001 -e metal --force --timeout 1h`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Hostname = args[0]
			return nodecmd.Reinstall(cmd.Context(), a.env(cmd), o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Platform, "env", "e", "", "platform of the node (default: the one platform that has it)")
	f.BoolVar(&o.Force, "force", false, `reinstall without the typed "yes" (needed where there is no terminal)`)
	f.BoolVar(&o.WipeData, "wipe-data", false, "create the node's data pools anew, destroying what they hold (default: keep them)")
	f.BoolVar(&o.Wait, "wait", true, "follow the machine until it is installed again, showing its steps (through node-provisioner's API)")
	cli.DurationVar(f, &o.WaitTimeout, "timeout", plasmanode.DefaultWaitTimeout, "with --wait, how long to wait for the machine to be installed")
	return c
}

// outputFlag adds -o for the commands that print a plan document.
func (a *app) outputFlag(c *cobra.Command) {
	c.Flags().StringVarP(&a.output, "output", "o", "table", "output format: table, or json or yaml for the plan as a document (apiVersion plasma-node/v1, kind Plan)")
}
