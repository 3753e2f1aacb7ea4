package usage

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

// Is reports whether err, or any error it wraps (through Unwrap() error or
// Unwrap() []error), has UsageError returning true.
func Is(err error) bool {
	if err == nil {
		return false
	}
	if m, ok := err.(Marker); ok && m.UsageError() {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return Is(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if Is(e) {
				return true
			}
		}
	}
	return false
}
