package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

func (a *app) secretCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "secret",
		Short:   "The site's named secrets, such as the BMC password an enrolment rule names (set, list, remove)",
		Example: "  node-provisioner secret set bmc-rack1 < bmc-password.txt && node-provisioner secret list",
	}
	c.AddCommand(a.secretSetCmd(), a.secretListCmd(), a.secretRemoveCmd())
	return c
}

// siteSecrets returns the site secrets of --server, else of the state
// folder.
func (a *app) siteSecrets() (registrar.SiteSecrets, error) {
	regs, err := a.registrar()
	if err != nil {
		return nil, err
	}
	s, ok := regs.(registrar.SiteSecrets)
	if !ok {
		return nil, fmt.Errorf("node-provisioner: a %T keeps no site secrets", regs)
	}
	return s, nil
}

func (a *app) secretSetCmd() *cobra.Command {
	var file string
	c := &cobra.Command{
		Use:     "set NAME [--from-file FILE]",
		Short:   "Keep a site secret, read from standard input or a file (never an argument); its first line is the value",
		Example: "  node-provisioner secret set bmc-rack1 --from-file /root/bmc-rack1.txt",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := secret.ValidateSiteName(name); err != nil {
				return usageError(fmt.Errorf("secret set: %w", err))
			}
			var value string
			var err error
			switch {
			case file != "":
				value, err = secret.ReadSiteValueFile(name, file)
				if err != nil {
					err = fmt.Errorf("--from-file: %w", err)
				}
			case cli.IsTerminal(cmd.InOrStdin()):
				err = fmt.Errorf("secret set %s: pipe the value in on standard input or give --from-file FILE (it is never typed as an argument)", name)
			default:
				var data []byte
				if data, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), secret.MaxSiteSecret+2)); err == nil {
					value, err = secret.SiteValue(name, data)
				}
				if err != nil {
					err = fmt.Errorf("standard input: %w", err)
				}
			}
			if err != nil {
				return usageError(err)
			}
			ss, err := a.siteSecrets()
			if err != nil {
				return err
			}
			if err := ss.SetSiteSecret(cmd.Context(), name, value); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Site secret %s set.\n", name)
			return nil
		},
	}
	c.Flags().StringVar(&file, "from-file", "", "the file whose first line is the value (default: standard input)")
	return c
}

func (a *app) secretListCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:     "list",
		Short:   "List the site secrets' names (never their values)",
		Example: "  node-provisioner secret list -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			ss, err := a.siteSecrets()
			if err != nil {
				return err
			}
			names, err := ss.SiteSecretNames(cmd.Context())
			if err != nil {
				return err
			}
			if output != "table" {
				return cli.WriteData(a.out, output, append([]string{}, names...))
			}
			if len(names) == 0 {
				fmt.Fprintln(a.out, "No site secrets.")
			}
			for _, n := range names {
				fmt.Fprintln(a.out, n)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return c
}

func (a *app) secretRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "remove NAME",
		Short:   "Remove a site secret; BMCs that name it fail until it is set again",
		Example: "  node-provisioner secret remove bmc-rack1",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := secret.ValidateSiteName(args[0]); err != nil {
				return usageError(fmt.Errorf("secret remove: %w", err))
			}
			ss, err := a.siteSecrets()
			if err != nil {
				return err
			}
			if err := ss.RemoveSiteSecret(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Site secret %s removed.\n", args[0])
			return nil
		},
	}
}
