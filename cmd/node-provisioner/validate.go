package main

import (
	"github.com/plasmactl/plasma-node/pxe/registry"

	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// validateAnswerCmd says what the installer of a version would say about
// an answer file, as proxmox-auto-install-assistant validate-answer does:
// exit 0 and its success line, or the problems and exit 1 (deprecated
// snake_case keys count as problems from 9.0, as they do there). A file
// starting with "{" is read as a JSON answer (9.2+), whatever its name.
func (a *app) validateAnswerCmd() *cobra.Command {
	var version string
	c := &cobra.Command{
		Use:   "validate-answer FILE [--version V]",
		Short: "Check an answer file as the Proxmox installer of a version reads it",
		Long: "Check an answer file as the Proxmox installer of a version reads it. The format is told by content:\n" +
			"a file starting with { is a JSON answer (installers from 9.2), any other TOML.",
		Example: `  node-provisioner validate-answer answer.toml
  node-provisioner validate-answer answer.toml --version 8.3.3
  node-provisioner validate-answer answer.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return usageError(err)
			}
			check, err := registry.CheckAnswer(data, version)
			if errors.Is(err, registry.ErrInvalidVersion) {
				return usageError(fmt.Errorf("--version: %w", err))
			}
			for _, d := range check.Deprecated {
				fmt.Fprintf(a.errw, "Warning: Section [%s] contains deprecated key `%s`, use `%s` instead.\n", d.Table, d.Key, d.Instead)
			}
			if len(check.Deprecated) > 0 {
				fmt.Fprintln(a.errw, "Warning: Answer file is using deprecated underscore keys. Since PVE 8.4-1 and PBS 3.4-1, kebab-case style keys are now preferred.")
			}
			if err != nil {
				for line := range strings.SplitSeq(err.Error(), "\n") {
					fmt.Fprintln(a.errw, line)
				}
			}
			if err != nil || len(check.Deprecated) > 0 {
				return fmt.Errorf("found issues in the answer file for installer %s", check.Version)
			}
			format := ""
			if check.JSON {
				format = ", JSON"
			}
			fmt.Fprintf(a.out, "The answer file was parsed successfully, no errors found! (installer %s%s)\n", check.Version, format)
			return nil
		},
	}
	c.Flags().StringVar(&version, "version", "", "installer release to check against: 8.2 to 9.2, an ISO name (9.2-1) or a package version (8.3.3); default the newest known")
	return c
}
