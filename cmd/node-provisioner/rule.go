package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/registrar"
)

func (a *app) ruleCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "rule",
		Short:   "Enrolment rules: turn discovered machines into registrations (add, apply, list, show, remove, test)",
		Example: "  node-provisioner rule apply -f rules.yaml && node-provisioner rule test",
	}
	c.AddCommand(a.ruleAddCmd(), a.ruleApplyCmd(), a.ruleListCmd(), a.ruleShowCmd(), a.ruleRemoveCmd(), a.ruleTestCmd())
	return c
}

// rules returns the rules of --server, else of the state folder.
func (a *app) rules() (registrar.Rules, error) {
	regs, err := a.registrar()
	if err != nil {
		return nil, err
	}
	r, ok := regs.(registrar.Rules)
	if !ok {
		return nil, fmt.Errorf("node-provisioner: a %T keeps no enrolment rules", regs)
	}
	return r, nil
}

// readRules reads the rules file name ("-": standard input).
func (a *app) readRules(name string) ([]enrol.Rule, error) {
	if name == "" {
		return nil, usageError(fmt.Errorf("-f: give the rules file (YAML or JSON; - reads standard input)"))
	}
	var in io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usageError(fmt.Errorf("-f: %w", err))
		}
		defer f.Close()
		in = f
	}
	rules, err := enrol.Decode(in)
	if err != nil {
		return nil, fmt.Errorf("-f %s: %w", name, err)
	}
	return rules, nil
}

func (a *app) ruleAddCmd() *cobra.Command {
	var file string
	var replace bool
	c := &cobra.Command{
		Use:     "add -f FILE [--replace]",
		Short:   "Add one rule, checked against the installer before it is kept",
		Example: "  node-provisioner rule add -f ssd-boot.yaml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rules, err := a.readRules(file)
			if err != nil {
				return err
			}
			if len(rules) != 1 {
				return usageError(fmt.Errorf("-f %s holds %d rules; rule add takes one (rule apply takes the whole set)", file, len(rules)))
			}
			rs, err := a.rules()
			if err != nil {
				return err
			}
			if _, err := rs.AddRule(cmd.Context(), rules[0], replace); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Added rule %s (priority %d).\n", rules[0].Name, rules[0].Priority)
			return nil
		},
	}
	c.Flags().StringVarP(&file, "file", "f", "", "the rule, YAML or JSON (- reads standard input)")
	c.Flags().BoolVar(&replace, "replace", false, "replace the rule of the same name, keeping its counter")
	return c
}

func (a *app) ruleApplyCmd() *cobra.Command {
	var file string
	c := &cobra.Command{
		Use:     "apply -f FILE",
		Short:   "Make the rules of FILE the whole set: rules not in it are removed, counters of those kept stay",
		Example: "  node-provisioner rule apply -f rules.yaml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rules, err := a.readRules(file)
			if err != nil {
				return err
			}
			rs, err := a.rules()
			if err != nil {
				return err
			}
			st, err := rs.ApplyRules(cmd.Context(), rules)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Applied %d rules.\n", len(st.Rules))
			return nil
		},
	}
	c.Flags().StringVarP(&file, "file", "f", "", "the rules file, YAML or JSON (- reads standard input)")
	return c
}

func (a *app) ruleListCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:     "list",
		Short:   "List the rules by priority, with how many machines each enrolled",
		Example: "  node-provisioner rule list -o yaml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			st, err := a.ruleState(cmd.Context())
			if err != nil {
				return err
			}
			if output != "table" {
				return cli.WriteData(a.out, output, st)
			}
			if len(st.Rules) == 0 {
				fmt.Fprintln(a.out, "No enrolment rules.")
				return nil
			}
			tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PRIORITY\tNAME\tMODE\tHOSTNAME\tENROLLED\tLIMIT")
			for _, r := range st.Rules {
				limit := dash(strings.TrimPrefix(fmt.Sprint(r.Limit), "0"))
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", r.Priority, r.Name, cmp.Or(r.Mode, enrol.ModeRegister), r.Hostname, st.Counters[r.Name].Enrolled, limit)
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return c
}

func (a *app) ruleState(ctx context.Context) (enrol.State, error) {
	rs, err := a.rules()
	if err != nil {
		return enrol.State{}, err
	}
	return rs.Rules(ctx)
}

func (a *app) ruleShowCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show a rule as rule add reads it",
		Example: "  node-provisioner rule show ssd-boot > ssd-boot.yaml",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "yaml" && output != "json" {
				return usageError(fmt.Errorf("--output %q: want yaml or json", output))
			}
			st, err := a.ruleState(cmd.Context())
			if err != nil {
				return err
			}
			r, err := st.Rule(args[0])
			if err != nil {
				return err
			}
			return cli.WriteData(a.out, output, r)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	return c
}

func (a *app) ruleRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "remove NAME",
		Short:   "Remove a rule and its counter; what it registered stays",
		Example: "  node-provisioner rule remove ssd-boot",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rs, err := a.rules()
			if err != nil {
				return err
			}
			if err := rs.RemoveRule(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Removed rule %s.\n", args[0])
			return nil
		},
	}
}

func (a *app) ruleTestCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:     "test",
		Short:   "Show, for every discovered machine, the rule that would take it and what it would get, or why none would",
		Example: "  node-provisioner rule test",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			rs, err := a.rules()
			if err != nil {
				return err
			}
			ds, err := rs.PreviewRules(cmd.Context())
			if err != nil {
				return err
			}
			if output != "table" {
				return cli.WriteData(a.out, output, append([]enrol.Decision{}, ds...))
			}
			if len(ds) == 0 {
				fmt.Fprintln(a.out, "No discovered machines.")
				return nil
			}
			tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "MACHINE\tRULE\tNAME\tBOOT DISK\tPOOLS\tADDRESS\tREASON")
			for _, d := range ds {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Machine, dash(d.Rule), dash(d.Name), dash(d.BootDiskText()), dash(strings.Join(d.Pools, " ")), dash(d.Address), dash(d.Reason))
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return c
}
