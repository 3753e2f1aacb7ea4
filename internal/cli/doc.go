// Package cli holds what the project's two binaries share: usage errors
// (exit code 2), the version command, the --log-format logger, the
// argument-count checks, a progress bar for long library calls and the
// terminal's confirmation prompt. It has no domain logic; the commands
// call the library packages.
package cli
