package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// maxSaid bounds the warnings kept of one window's start.
const maxSaid = 32

// said is what a window warned of as it started, for the API's reply:
// the operator who opens the window through the daemon sees the same
// warnings as one who runs serve.
type said struct {
	mu      sync.Mutex
	lines   []string
	stopped bool
}

// stop keeps what was said so far and nothing after (the window serves:
// later warnings are about requests, not its start).
func (s *said) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

// list returns what was said.
func (s *said) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// add keeps line, once: one warning per event.
func (s *said) add(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped && len(s.lines) < maxSaid && !slices.Contains(s.lines, line) {
		s.lines = append(s.lines, line)
	}
}

// saidHandler passes records on to next and keeps the warnings in said,
// each as its message and its attributes ("msg (k=v, k=v)").
type saidHandler struct {
	next  slog.Handler
	said  *said
	attrs []slog.Attr
}

func (h *saidHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.next.Enabled(ctx, l)
}

func (h *saidHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn {
		var parts []string
		add := func(a slog.Attr) bool {
			if a.Key != "" {
				parts = append(parts, fmt.Sprintf("%s=%v", a.Key, a.Value.Resolve().Any()))
			}
			return true
		}
		for _, a := range h.attrs {
			add(a)
		}
		r.Attrs(add)
		line := r.Message
		if len(parts) > 0 {
			line += " (" + strings.Join(parts, ", ") + ")"
		}
		h.said.add(line)
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *saidHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &saidHandler{next: h.next.WithAttrs(as), said: h.said, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *saidHandler) WithGroup(name string) slog.Handler {
	return &saidHandler{next: h.next.WithGroup(name), said: h.said, attrs: h.attrs}
}

// logSaid returns log (nil: discard) keeping its warnings in s.
func logSaid(log *slog.Logger, s *said) *slog.Logger {
	next := slog.DiscardHandler
	if log != nil {
		next = log.Handler()
	}
	return slog.New(&saidHandler{next: next, said: s})
}
