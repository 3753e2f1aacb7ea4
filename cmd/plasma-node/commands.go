package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	plasmanode "github.com/plasmactl/plasma-node"
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
			p, err := a.project(cmd.Context())
			if err != nil {
				return err
			}
			if ro.Hostname == "" {
				for _, f := range []string{"public-ip", "private-ip", "zone", "ip-pool"} {
					if cmd.Flags().Changed(f) {
						return usageError(fmt.Errorf("--%s needs --hostname (it registers a node)", f))
					}
				}
				so.Platform = args[0]
				res, err := p.Scaffold(cmd.Context(), so)
				if err != nil {
					return err
				}
				if res.Created {
					fmt.Fprintf(a.out, "Created platform %s (provider %s) in %s\n", so.Platform, res.Platform.Infrastructure.MetalProvider, res.Platform.File())
				} else {
					fmt.Fprintf(a.out, "Platform %s already exists with these settings\n", so.Platform)
				}
				return nil
			}
			for _, f := range []string{"provider", "domain", "private-network"} {
				if cmd.Flags().Changed(f) {
					return usageError(fmt.Errorf("--%s sets up a platform; it cannot be combined with --hostname", f))
				}
			}
			ro.Platform = args[0]
			n, err := p.Register(cmd.Context(), ro)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Registered node %s (private IP %s) in %s\n", n, n.Network.PrivateIP, n.File())
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&so.Provider, "provider", "p", "", "infrastructure provider: "+strings.Join(plasmanode.Providers(), ", ")+" (default manual)")
	f.StringVarP(&so.Domain, "domain", "d", "", "platform domain (dns.domain)")
	f.StringVar(&so.PrivateNetwork, "private-network", "", "private network CIDR (default 192.168.0.0/16)")
	f.StringVar(&ro.Hostname, "hostname", "", "register a node with this hostname (an RFC 1123 label)")
	f.StringVar(&ro.PublicIP, "public-ip", "", "the node's public IP")
	f.StringVar(&ro.PrivateIP, "private-ip", "", "the node's private IP (default: the lowest free address of the pool)")
	f.StringArrayVarP(&ro.Zones, "zone", "z", nil, "zone to allocate the node to (repeatable)")
	f.StringVar(&ro.IPPool, "ip-pool", "", "networking.ip_pools entry to allocate the private IP from")
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
			if err := checkOutput(output); err != nil {
				return err
			}
			p, err := a.project(cmd.Context())
			if err != nil {
				return err
			}
			o.Hostname, o.Ops = args[0], args[1:]
			res, err := p.Allocate(cmd.Context(), o)
			if err != nil {
				return err
			}
			if output != "table" {
				return encode(a.out, output, res)
			}
			fmt.Fprintf(a.out, "%s@%s zones:\n", res.Hostname, res.Platform)
			if len(res.Zones) == 0 {
				fmt.Fprintln(a.out, "  (none)")
			}
			for _, z := range res.Zones {
				fmt.Fprintln(a.out, " ", z)
			}
			if len(o.Ops) > 0 && !res.Modified {
				fmt.Fprintln(a.out, "(unchanged)")
			}
			return nil
		},
	}
	c.Flags().StringVarP(&o.Platform, "env", "e", "", "platform of the node (default: the one platform that has it)")
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return c
}

func (a *app) listCmd() *cobra.Command {
	var (
		o      plasmanode.ListOptions
		output string
	)
	c := &cobra.Command{
		Use:   "list [PLATFORM]",
		Short: "List nodes, of one platform or all, optionally those in a zone",
		Example: `  plasma-node list
  plasma-node list demo --zone foundation -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			p, err := a.project(cmd.Context())
			if err != nil {
				return err
			}
			if len(args) == 1 {
				o.Platform = args[0]
			}
			ns, err := p.List(cmd.Context(), o)
			if err != nil {
				return err
			}
			return printNodes(a.out, output, ns)
		},
	}
	c.Flags().StringVarP(&o.Zone, "zone", "z", "", "only nodes allocated to this zone or a zone below it")
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
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
			if err := checkOutput(output); err != nil {
				return err
			}
			p, err := a.project(cmd.Context())
			if err != nil {
				return err
			}
			shown, err := p.Show(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if shown.Node != nil {
				return printNode(a.out, output, shown.Node)
			}
			return printPlatform(a.out, output, shown.Platform)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return c
}
