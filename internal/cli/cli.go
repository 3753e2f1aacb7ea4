package cli

import (
	"errors"
	"fmt"
	"io"
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

// ErrCancelled is a person's "no" at a confirmation prompt: [Exit]
// prints "Cancelled" for it and returns 1, as tofu apply does, so that a
// script tells "did nothing" from "applied".
var ErrCancelled = errors.New("Cancelled") //nolint:staticcheck // printed as is

// Setup adds cobra's help and completion commands (with examples, as
// every command has), makes root's flag and argument-count errors usage
// errors and silences cobra's own error printing, which [Exit] does.
// Call it after root.SetOut: the completion scripts go to that writer.
//
// It also gives root --version (the version command's line), makes
// "help TOPIC" of an unknown topic and an unknown subcommand of a command
// group ("tls bogus") usage errors rather than help printed with exit 0.
func Setup(root *cobra.Command) {
	root.SilenceErrors, root.SilenceUsage = true, true
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	if root.Version == "" {
		bi, _ := debug.ReadBuildInfo()
		root.Version = ModuleVersion(bi, Module)
	}
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	name := root.Name()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Run, c.RunE = nil, helpTopic
			setExample(c, "  "+name+" help\n  "+name+" help "+firstOther(root))
		case "completion":
			setExample(c, "  "+name+" completion bash > ~/.local/share/bash-completion/completions/"+name+"\n  "+name+" completion zsh > \"${fpath[1]}/_"+name+"\"")
			for _, sh := range c.Commands() {
				setExample(sh, completionExample(name, sh.Name()))
			}
		}
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return Usage(err) })
	refuseUnknownSubcommands(root)
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

// helpTopic is the help command: the help of the command args name, or a
// usage error naming the topic it does not know.
func helpTopic(c *cobra.Command, args []string) error {
	cmd, rest, err := c.Root().Find(args)
	if err != nil || cmd == nil || len(rest) > 0 {
		return Usage(fmt.Errorf("unknown help topic %q; run %s help for the commands", strings.Join(args, " "), c.Root().Name()))
	}
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	return cmd.Help()
}

// refuseUnknownSubcommands makes every command group below root (a
// command with subcommands and nothing to run itself) print its help
// when called alone and refuse an argument it has no subcommand for.
func refuseUnknownSubcommands(root *cobra.Command) {
	for _, c := range root.Commands() {
		refuseUnknownSubcommands(c)
		if !c.HasSubCommands() || c.Runnable() {
			continue
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return Usage(fmt.Errorf("unknown command %q for %q; run %s --help for its commands", args[0], cmd.CommandPath(), cmd.CommandPath()))
			}
			return cmd.Help()
		}
	}
}

func setExample(c *cobra.Command, ex string) {
	if c.Example == "" {
		c.Example = ex
	}
}

// firstOther returns the name of root's first command that is neither
// help nor completion, for the help command's example.
func firstOther(root *cobra.Command) string {
	for _, c := range root.Commands() {
		if n := c.Name(); n != "help" && n != "completion" {
			return n
		}
	}
	return ""
}

func completionExample(name, shell string) string {
	switch shell {
	case "bash":
		return "  source <(" + name + " completion bash)\n  " + name + " completion bash > /etc/bash_completion.d/" + name
	case "zsh":
		return "  " + name + " completion zsh > \"${fpath[1]}/_" + name + "\""
	case "fish":
		return "  " + name + " completion fish > ~/.config/fish/completions/" + name + ".fish"
	case "powershell":
		return "  " + name + " completion powershell | Out-String | Invoke-Expression"
	}
	return "  " + name + " completion " + shell
}

// MissingHelp walks root and every command below it and returns the
// command paths that lack a Short description or an Example, for a test
// that keeps every --help useful.
func MissingHelp(root *cobra.Command) []string {
	var out []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Short == "" {
			out = append(out, c.CommandPath()+": no Short")
		}
		if c.Example == "" {
			out = append(out, c.CommandPath()+": no Example")
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

// BrokenEntries is the error of a list some of whose entries could not
// be read: [Exit] says each on a line of its own, then the count.
type BrokenEntries struct {
	// Noun names an entry ("registration").
	Noun string
	// Errs say why each entry could not be read, naming its file.
	Errs []string
}

// Error says how many could not be read and why.
func (e *BrokenEntries) Error() string {
	return e.Summary() + ": " + strings.Join(e.Errs, "; ")
}

// Entries returns one line per broken entry.
func (e *BrokenEntries) Entries() []string { return e.Errs }

// Summary says how many entries could not be read.
func (e *BrokenEntries) Summary() string {
	noun := e.Noun + "s"
	if len(e.Errs) == 1 {
		noun = e.Noun
	}
	return fmt.Sprintf("%d %s could not be read; the others are listed", len(e.Errs), noun)
}

// Exit prints err, if any, as "<name>: <err>" on w and returns the exit
// code: 0 for none, 2 when isUsage says so or [IsUsage] does, else 1.
func Exit(w io.Writer, name string, err error, isUsage func(error) bool) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrCancelled):
		fmt.Fprintln(w, ErrCancelled)
		return 1
	}
	var many interface {
		Entries() []string
		Summary() string
	}
	if errors.As(err, &many) {
		// One line per broken entry, then what it comes to.
		for _, e := range many.Entries() {
			fmt.Fprintf(w, "%s: %s\n", name, e)
		}
		fmt.Fprintf(w, "%s: %s\n", name, many.Summary())
	} else {
		fmt.Fprintf(w, "%s: %v\n", name, err)
	}
	if IsUsage(err) || (isUsage != nil && isUsage(err)) {
		return 2
	}
	return 1
}
