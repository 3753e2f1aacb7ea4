package tofu

import (
	"errors"
	"log/slog"
)

var (
	// ErrInvalid is matched by errors for input this package cannot use:
	// a platform name, an identifier, an expression, a backend or option
	// value. The message names the value and says what would be valid.
	ErrInvalid = errors.New("invalid")

	// ErrStateLocked is matched by errors from runs that failed because
	// another run holds the state lock (a concurrent run on a pg or s3
	// backend, or on the same local state).
	ErrStateLocked = errors.New("state locked")
)

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
