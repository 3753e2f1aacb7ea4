// Package nodecmd runs plasma-node's commands for a front end: it checks
// which options go together, opens the project, calls the operation of
// package plasmanode and prints its messages, tables and -o json|yaml.
// cmd/plasma-node (cobra flags) and the plasmactl plugin (Launchr
// actions) both parse their input into its requests, so the two say the
// same things.
//
// It owns the command line's words: the library's errors name options
// fields and consents in its own words (plasmanode.OptionError,
// plasmanode.PlanRefusedError, ...), and this package turns them into the
// flags (--private-ip, --allow-delete) and adds what to do next, in one
// place; it prints the plans the library reports through OnPlan and asks
// with [cli.LinePrompter].
//
// It parses no command line and exits nothing; errors that are bad usage
// are marked with [cli.Usage], and [ExitCode] maps any error to the exit
// code both front ends use.
package nodecmd
