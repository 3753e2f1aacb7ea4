package ipam

import (
	"errors"

	"github.com/plasmactl/plasma-node/internal/usage"
)

// Sentinel errors; callers branch on them with errors.Is.
var (
	// ErrInvalidPool means a pool Config is invalid.
	ErrInvalidPool = usage.New("invalid address pool")
	// ErrInvalidCIDR means a network in CIDR notation is malformed or
	// has host bits set ([ParseCIDR]).
	ErrInvalidCIDR = usage.New("invalid CIDR")
	// ErrInvalidAddress means an IP address does not parse ([ParseAddr]).
	ErrInvalidAddress = usage.New("invalid address")
	// ErrExhausted means the pool has fewer free addresses than asked for.
	ErrExhausted = errors.New("address pool exhausted")
	// ErrOutOfPool means an address lies outside the pool's CIDR or range.
	ErrOutOfPool = usage.New("address outside pool")
	// ErrReserved means an address is in the pool's span but never handed
	// out: the network or broadcast address, the gateway, an excluded
	// address, or (with SkipEdges) an IPv4 address ending in .0 or .255.
	ErrReserved = usage.New("address reserved")
	// ErrInUse means an address is already used.
	ErrInUse = usage.New("address already used")
)

// poolError carries a full message and wraps a sentinel, so the message
// reads naturally while errors.Is still finds the sentinel.
type poolError struct {
	msg string
	err error
}

func (e *poolError) Error() string { return e.msg }
func (e *poolError) Unwrap() error { return e.err }

func newError(sentinel error, msg string) error {
	return &poolError{msg: msg, err: sentinel}
}
