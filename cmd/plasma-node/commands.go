package main

import (
	"strings"

	"github.com/spf13/cobra"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/nodecmd"
	"github.com/plasmactl/plasma-node/providers/builtin"
)

func (a *app) addCmd() *cobra.Command {
	var (
		so plasmanode.ScaffoldOptions
		ro plasmanode.RegisterOptions
	)
	c := &cobra.Command{
		Use:   "add PLATFORM [--provider P] [--domain D] | add PLATFORM --hostname H [--public-ip IP] [--private-ip IP] [-z ZONE]...",
		Short: "Create a platform scaffold, or register an existing node by hand",
		Example: `  plasma-node add myplatform --provider scaleway --domain example.com
  plasma-node add myplatform --hostname server1 --public-ip 51.159.0.10 -z foundation.cluster.control`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return nodecmd.Add(cmd.Context(), a.env(cmd), args[0], so, ro, cmd.Flags().Changed)
		},
	}
	f := c.Flags()
	f.StringVarP(&so.Provider, "provider", "p", "", "infrastructure provider: "+strings.Join(builtin.Set().Names(), ", ")+" (default manual)")
	f.StringVarP(&so.Domain, "domain", "d", "", "platform domain (dns.domain)")
	f.StringVar(&so.PrivateNetwork, "private-network", "", "private network CIDR (default 192.168.0.0/16)")
	f.StringVar(&ro.Hostname, "hostname", "", "register a node with this hostname (an RFC 1123 label)")
	f.StringVar(&ro.PublicIP, "public-ip", "", "the node's public IP")
	f.StringVar(&ro.PrivateIP, "private-ip", "", "the node's private IP (default: the lowest free address of the pool)")
	f.StringArrayVarP(&ro.Zones, "zone", "z", nil, "zone to allocate the node to (repeatable)")
	f.StringVar(&ro.IPPool, "ip-pool", "", "networking.ip_pools entry to allocate the private IP from")
	a.outputFlag(c)
	return c
}

func (a *app) allocateCmd() *cobra.Command {
	var (
		o      plasmanode.AllocateOptions
		output string
	)
	c := &cobra.Command{
		Use:   "allocate NODE [OPS...]",
		Short: "Show or change a node's zones: ZONE adds, ZONE- removes, OLD/NEW replaces",
		Example: `  plasma-node allocate node001
  plasma-node allocate node001 platform.foundation.cluster.control platform.cognition.data-
  plasma-node allocate node001 platform.foundation.cluster.control/platform.foundation.cluster.nodes`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Hostname, o.Ops = args[0], args[1:]
			return nodecmd.Allocate(cmd.Context(), a.env(cmd), o, output)
		},
	}
	c.Flags().StringVarP(&o.Platform, "env", "e", "", "platform of the node (default: the one platform that has it)")
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return c
}

func (a *app) listCmd() *cobra.Command {
	var (
		o plasmanode.ListOptions
		v nodecmd.ListView
	)
	c := &cobra.Command{
		Use:   "list [PLATFORM]",
		Short: "List nodes, of one platform or all, optionally those in a zone",
		Example: `  plasma-node list
  plasma-node list demo --zone foundation -o json
  plasma-node list -o wide --sort-by private-ip
  plasma-node list demo -o name`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Platform = args[0]
			}
			return nodecmd.List(cmd.Context(), a.env(cmd), o, v)
		},
	}
	c.Flags().StringVarP(&o.Zone, "zone", "z", "", "only nodes allocated to this zone or a zone below it")
	c.Flags().StringVarP(&v.Output, "output", "o", "table", "output format: table, wide, name, json or yaml")
	c.Flags().BoolVar(&v.NoHeaders, "no-headers", false, "leave out the table's header line")
	c.Flags().StringVar(&v.SortBy, "sort-by", "", "sort by a column: platform, hostname, public-ip, private-ip, zones, provider, server-id, pool, machine, install")
	return c
}

func (a *app) showCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "show PLATFORM|NODE",
		Short: "Show a platform and its nodes, or one node",
		Example: `  plasma-node show demo
  plasma-node show server1 -o yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return nodecmd.Show(cmd.Context(), a.env(cmd), args[0], output)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return c
}
