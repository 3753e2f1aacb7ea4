package registry

import (
	"errors"
	"time"
)

// ErrAlreadyConsumed is returned (wrapped) by [Registrations.Consume] when the
// registration has no pending file but a consumed one: it was served.
var ErrAlreadyConsumed = errors.New("registration already consumed")

// ConsumeRecord is what a consumed registration records about the request
// it answered. It holds no secret.
type ConsumeRecord struct {
	// Time is when the answer was served; [Registrations.Consume] fills in now
	// when it is zero.
	Time time.Time
	// ClientIP is the address the request came from (TAPPaaS's
	// install_ip).
	ClientIP string
	// MACs are the MAC addresses the installer posted.
	MACs []string
	// Serial is the DMI system serial the installer posted.
	Serial string
	// UUID is the DMI system UUID the installer posted.
	UUID string
	// Undelivered is set while the answer was taken but not seen
	// delivered: from the consumption until the window wrote the reply
	// ([Registrations.MarkDelivered]). One left set (the connection died, or the
	// window did) can be re-armed ([Registrations.Rearm]).
	Undelivered bool
}

// ErrDelivered is returned (wrapped) by [Registrations.Rearm] for a registration
// whose answer was delivered: its machine installed or is installing.
var ErrDelivered = errors.New("answer was delivered")
