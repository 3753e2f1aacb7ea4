package usage

import "errors"

// Marker is the method an error has when it means bad input. An error of
// any package, an embedder's included, counts as bad input when it, or an
// error it wraps, has UsageError returning true.
type Marker interface {
	UsageError() bool
}

// New returns a sentinel error with the text msg that means bad input. As
// errors.New, each call returns a distinct error, compared with errors.Is.
func New(msg string) error { return &sentinel{msg} }

type sentinel struct{ msg string }

var _ Marker = (*sentinel)(nil)

func (e *sentinel) Error() string { return e.msg }

// UsageError reports true: the sentinel means bad input.
func (e *sentinel) UsageError() bool { return true }

// Is reports whether err, or an error it wraps, is marked as bad input.
func Is(err error) bool {
	var m Marker
	return errors.As(err, &m) && m.UsageError()
}
