package main

import (
	"log/slog"

	"github.com/spf13/cobra"
)

// Dynamic shell completion: registration names (of --server's daemon, or
// of the state folder), power actions and -o values.

// addCompletion gives root's commands their completions.
func (a *app) addCompletion(root *cobra.Command) {
	none := cobra.ShellCompDirectiveNoFileComp
	// names completes the argument at index at with the registrations'
	// names, and fixed the ones before it.
	names := func(at int, fixed ...string) cobra.CompletionFunc {
		return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			switch {
			case len(args) < at:
				return fixed, none
			case len(args) > at:
				return nil, none
			}
			return a.registrationNames(cmd), none
		}
	}
	output := cobra.FixedCompletions([]string{"table", "json", "yaml"}, none)
	for _, c := range root.Commands() {
		switch c.Name() {
		case "register", "unregister", "rearm", "reinstall", "boot":
			c.ValidArgsFunction = names(0)
		case "power":
			c.ValidArgsFunction = names(1, "status", "on", "off", "cycle")
		case "list", "status":
			_ = c.RegisterFlagCompletionFunc("output", output)
		}
	}
}

// registrationNames returns the names of the registrations, none when
// they cannot be read; a state folder without registrations is not
// created.
func (a *app) registrationNames(cmd *cobra.Command) []string {
	if a.defaults() != nil {
		return nil
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.server == "" {
		if ok, err := a.localState().Exists(); !ok || err != nil {
			return nil
		}
	}
	st, err := a.nodes(cmd.Context())
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range st {
		out = append(out, n.Name)
	}
	return out
}
