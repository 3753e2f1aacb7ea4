// Package nodecmd runs plasma-node's commands for a front end: it checks
// which options go together, opens the project, calls the operation of
// package plasmanode and prints its messages, tables and -o json|yaml.
// cmd/plasma-node (cobra flags) and the plasmactl plugin (Launchr
// actions) both parse their input into its requests, so the two say the
// same things.
//
// It parses no command line and exits nothing; errors that are bad usage
// are marked with [cli.Usage], and [ExitCode] maps any error to the exit
// code both front ends use.
package nodecmd
