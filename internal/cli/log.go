package cli

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"
)

// Logging holds the logging flags both binaries have. A command is quiet
// by default: its human lines on stdout, warnings and errors on stderr,
// no INFO lines; -v or --log-level brings the log back.
type Logging struct {
	// Format is --log-format: text or json.
	Format string
	// Level is --log-level: debug, info, warn or error; empty: the
	// command's default, or info with Verbose.
	Level string
	// Verbose is -v/--verbose: the info log, and what else the binary
	// shows with it (plasma-node: tofu's own output).
	Verbose bool
	// Voice, when set, is the binary's name: a command whose default
	// level is warn, run without -v, --log-level or --log-format json,
	// says its warnings as it says its errors, "<Voice>: warning: …",
	// one line each, rather than as log lines.
	Voice string
}

// Structured reports whether the flags ask for the structured log.
func (l *Logging) Structured() bool {
	return l.Verbose || l.Level != "" || l.Format != "text"
}

// AddFlags adds --log-format, --log-level and -v/--verbose to fs;
// verboseAlso, when not empty, is what else -v shows, for its help.
func (l *Logging) AddFlags(fs *pflag.FlagSet, verboseAlso string) {
	verbose := "log what the command does (info level)"
	if verboseAlso != "" {
		verbose += " and show " + verboseAlso
	}
	fs.StringVar(&l.Format, "log-format", "text", "log format on stderr: text or json")
	fs.StringVar(&l.Level, "log-level", "", "log level on stderr: debug, info, warn or error (default warn; info with -v)")
	fs.BoolVarP(&l.Verbose, "verbose", "v", false, verbose)
}

// Logger returns the logger the flags ask for, writing to w; def is the
// level when neither --log-level nor -v is given. A bad format or level
// is a [UsageError].
func (l *Logging) Logger(w io.Writer, def slog.Level) (*slog.Logger, error) {
	level := def
	if l.Verbose && def > slog.LevelInfo {
		level = slog.LevelInfo
	}
	if l.Level != "" {
		if err := level.UnmarshalText([]byte(l.Level)); err != nil || strings.ContainsAny(l.Level, "+-") {
			return nil, Usage(fmt.Errorf("--log-level %q: want debug, info, warn or error", l.Level))
		}
	}
	opts := &slog.HandlerOptions{Level: level}
	if l.Voice != "" && !l.Structured() && def >= slog.LevelWarn {
		return slog.New(newVoice(w, l.Voice, level)), nil
	}
	switch l.Format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, Usage(fmt.Errorf("--log-format %q: want text or json", l.Format))
}
