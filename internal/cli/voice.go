package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// voiceHandler writes warnings and errors as the binary says its own
// errors, one line each: "plasma-node: warning: <message> (key=value,
// ...)". It is the default log of a command that is not a server; -v,
// --log-level and --log-format json bring the structured log instead.
type voiceHandler struct {
	name  string
	level slog.Level
	mu    *sync.Mutex
	w     io.Writer
	attrs []slog.Attr
	group string
}

// NewVoice returns a handler that says records at level or above on w in
// the voice of the program called name: "<name>: warning: <message>
// (key=value, ...)", one line each. It is for a program embedding these
// commands (the plasmactl plugin) whose own log is off by default, so
// that a warning reaches its user as plasma-node says it.
func NewVoice(w io.Writer, name string, level slog.Level) slog.Handler {
	return newVoice(w, name, level)
}

func newVoice(w io.Writer, name string, level slog.Level) *voiceHandler {
	return &voiceHandler{name: name, level: level, mu: &sync.Mutex{}, w: w}
}

func (h *voiceHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *voiceHandler) Handle(_ context.Context, r slog.Record) error {
	kind := "warning"
	if r.Level >= slog.LevelError {
		kind = "error"
	}
	var parts []string
	add := func(a slog.Attr) bool {
		a.Value = a.Value.Resolve()
		if a.Equal(slog.Attr{}) {
			return true
		}
		v := a.Value.String()
		if strings.ContainsAny(v, " \t\"=,()") || v == "" {
			v = fmt.Sprintf("%q", v)
		}
		parts = append(parts, a.Key+"="+v)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	line := fmt.Sprintf("%s: %s: %s", h.name, kind, r.Message)
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line+"\n")
	return err
}

func (h *voiceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *voiceHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.group = name
	return &c
}

// Reported returns the logger to give a library whose warnings the
// command reports itself, in its own words (a re-registration, a moved
// pin): log itself when the structured log is asked for, else log with
// its warnings left out, so that each event is said once.
func (l *Logging) Reported(log *slog.Logger) *slog.Logger {
	if l.Structured() || log == nil {
		return log
	}
	return slog.New(minLevel{log.Handler(), slog.LevelError})
}

// minLevel passes on the records of h at or above level.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(as), m.level}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{m.Handler.WithGroup(name), m.level}
}
