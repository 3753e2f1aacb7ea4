package main

import (
	"github.com/spf13/cobra"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/nodecmd"
)

// plasmactl-node's register, deallocate, query and validate.

func (a *app) registerCmd() *cobra.Command {
	var ro plasmanode.RegisterOptions
	c := &cobra.Command{
		Use:   "register PLATFORM --hostname H --public-ip IP [--private-ip IP] [-z ZONE]...",
		Short: "Register an existing machine as a node by hand (add --hostname's rules)",
		Example: `  plasma-node register demo --hostname server1 --public-ip 51.159.0.10 -z foundation.cluster.control
  plasma-node register demo --hostname server2 --public-ip 51.159.0.11 --private-ip 192.168.0.20`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ro.Platform = args[0]
			return nodecmd.Register(cmd.Context(), a.env(cmd), ro, cmd.Flags().Changed)
		},
	}
	f := c.Flags()
	f.StringVar(&ro.Hostname, "hostname", "", "the node's hostname, an RFC 1123 label (required)")
	f.StringVar(&ro.PublicIP, "public-ip", "", "the node's public IP (required)")
	f.StringVar(&ro.PrivateIP, "private-ip", "", "the node's private IP (default: the lowest free address of the pool)")
	f.StringArrayVarP(&ro.Zones, "zone", "z", nil, "zone to allocate the node to (repeatable)")
	f.StringVar(&ro.IPPool, "ip-pool", "", "networking.ip_pools entry to allocate the private IP from")
	return c
}

func (a *app) deallocateCmd() *cobra.Command {
	var (
		o      plasmanode.DeallocateOptions
		output string
	)
	c := &cobra.Command{
		Use:   "deallocate NODE ZONE... [-e PLATFORM] [--recursive]",
		Short: "Remove zones from a node; --recursive also those below them",
		Example: `  plasma-node deallocate node001 platform.cognition.data
  plasma-node deallocate node001 platform.foundation --recursive -o json`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Hostname, o.Zones = args[0], args[1:]
			return nodecmd.Deallocate(cmd.Context(), a.env(cmd), o, output)
		},
	}
	c.Flags().StringVarP(&o.Platform, "env", "e", "", "platform of the node (default: the one platform that has it)")
	c.Flags().BoolVar(&o.Recursive, "recursive", false, "also remove the node's zones below each zone given")
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return c
}

func (a *app) queryCmd() *cobra.Command {
	var (
		o      plasmanode.QueryOptions
		output string
	)
	c := &cobra.Command{
		Use:   "query ZONE|COMPONENT [-e PLATFORM]",
		Short: "List the nodes a zone, or a zone below it, is allocated to, or those a component lands on",
		Long: `A ZONE gives the nodes allocated to it or to a zone below it. A COMPONENT
(a name not under "platform." that topology.yaml does not define as a zone)
gives the nodes of the zones it is attached to, as component:attach writes
them in the layer playbook src/<layer>/<layer>.yaml or <layer>/<layer>.yaml
(plays whose hosts is the zone and whose roles name the component).`,
		Example: `  plasma-node query foundation.cluster
  plasma-node query platform.cognition.data -e demo -o json
  plasma-node query interaction.applications.dashboards`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Zone = args[0]
			return nodecmd.Query(cmd.Context(), a.env(cmd), o, output)
		},
	}
	c.Flags().StringVarP(&o.Platform, "env", "e", "", "only nodes of this platform (default: all)")
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return c
}

func (a *app) validateCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "validate [NODE|PLATFORM]",
		Short: "Check node files: addresses, zones, provider metadata, pools; exit 1 on errors",
		Example: `  plasma-node validate
  plasma-node validate demo -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return nodecmd.Validate(cmd.Context(), a.env(cmd), name, output)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return c
}

func (a *app) knownHostsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "known-hosts PLATFORM",
		Short: "Print an OpenSSH known_hosts of the platform's installed nodes (by hostname, FQDN and address)",
		Example: `  plasma-node known-hosts metal >> ~/.ssh/known_hosts
  ssh-keygen -F 192.0.2.41 -f <(plasma-node known-hosts metal)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return nodecmd.KnownHosts(cmd.Context(), a.env(cmd), args[0])
		},
	}
}

func (a *app) refreshCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "refresh PLATFORM",
		Short: "Write the installed address and SSH host keys the installers reported into the node files",
		Example: `  plasma-node refresh metal
  plasma-node refresh metal --provisioner-dir /var/lib/node-provisioner`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return nodecmd.Refresh(cmd.Context(), a.env(cmd), args[0])
		},
	}
}
