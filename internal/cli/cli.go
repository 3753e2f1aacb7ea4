package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// UsageError marks bad usage or bad input: the binaries exit 2 for it.
type UsageError struct {
	// Err says what was wrong with the usage.
	Err error
}

// Error returns the message of the wrapped error.
func (e UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error, for [errors.Is] and [errors.As].
func (e UsageError) Unwrap() error { return e.Err }

// Usage wraps err as a [UsageError].
func Usage(err error) error { return UsageError{err} }

// IsUsage reports whether err is a [UsageError] or one of cobra's own
// usage errors (an unknown command, a required flag not set), which carry
// no type to test.
func IsUsage(err error) bool {
	var ue UsageError
	msg := err.Error()
	return errors.As(err, &ue) || strings.HasPrefix(msg, "unknown command ") || strings.HasPrefix(msg, "required flag(s) ")
}

// NewLogger returns the logger --log-format asks for: "text" or "json" on w.
func NewLogger(format string, w io.Writer) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, Usage(fmt.Errorf("--log-format %q: want text or json", format))
}

// Setup makes root's flag and argument-count errors usage errors and
// silences cobra's own error printing, which [Exit] does.
func Setup(root *cobra.Command) {
	root.SilenceErrors, root.SilenceUsage = true, true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return Usage(err) })
	for _, c := range root.Commands() {
		if check := c.Args; check != nil {
			c.Args = func(cmd *cobra.Command, args []string) error {
				if err := check(cmd, args); err != nil {
					return Usage(fmt.Errorf("%w; usage: %s", err, cmd.UseLine()))
				}
				return nil
			}
		}
	}
}

// Exit prints err, if any, as "<name>: <err>" on w and returns the exit
// code: 0 for none, 2 when isUsage says so or [IsUsage] does, else 1.
func Exit(w io.Writer, name string, err error, isUsage func(error) bool) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(w, "%s: %v\n", name, err)
	if IsUsage(err) || (isUsage != nil && isUsage(err)) {
		return 2
	}
	return 1
}

// VersionCommand prints "<name> <module version>".
func VersionCommand(name string) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the module version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := "(devel)"
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				v = bi.Main.Version
			}
			fmt.Fprintln(cmd.OutOrStdout(), name, v)
			return nil
		},
	}
}
