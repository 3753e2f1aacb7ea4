package zones

import "github.com/plasmactl/plasma-node/internal/usage"

// Sentinel errors. Every error returned by this package for bad input wraps
// one of these, so callers branch with errors.Is.
var (
	// ErrInvalidZone means a zone path is not dotted segments matching
	// [a-z0-9_-]+.
	ErrInvalidZone = usage.New("invalid zone")
	// ErrInvalidSpec means a zone:type:count spec is malformed.
	ErrInvalidSpec = usage.New("invalid zone spec")
	// ErrInvalidOp means an allocation operation (X, X- or old/new) is
	// malformed.
	ErrInvalidOp = usage.New("invalid allocation op")
	// ErrNotAllocated means an operation removes or replaces a zone the node
	// does not have.
	ErrNotAllocated = usage.New("zone not allocated")
	// ErrInvalidTopology means topology.yaml could not be parsed or has a
	// shape or segment this package refuses.
	ErrInvalidTopology = usage.New("invalid topology")
	// ErrUnknownZone means a valid zone is not defined in topology.yaml.
	ErrUnknownZone = usage.New("unknown zone")
)

// inputError carries a full message and wraps one or more errors (a
// sentinel and, when there is one, the cause), so that the message reads
// naturally while errors.Is still finds the sentinel.
type inputError struct {
	msg  string
	errs []error
}

func (e *inputError) Error() string   { return e.msg }
func (e *inputError) Unwrap() []error { return e.errs }

// newError returns an error with message msg wrapping sentinel and, when
// non-nil, cause; the cause's message is appended after ": ".
func newError(sentinel, cause error, msg string) error {
	e := &inputError{msg: msg, errs: []error{sentinel}}
	if cause != nil {
		e.msg += ": " + cause.Error()
		e.errs = append(e.errs, cause)
	}
	return e
}
