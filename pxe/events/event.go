package events

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Event is one thing that happened on the way to an installed machine: a
// boot step the window saw (a proxy-DHCP offer, a TFTP download, a
// script), an answer-side request and what came of it, or an action
// through the machine's BMC. It never holds a secret (no password, hash,
// token or answer body). Its JSON form is one line of node-provisioner's
// events.jsonl and one message of the API's event stream.
type Event struct {
	// Time is when it happened.
	Time time.Time `json:"time"`
	// Kind is what happened, such as [Answer] or [Refused].
	Kind Kind `json:"kind"`
	// Node is the registration's name, when one was involved.
	Node string `json:"node,omitempty"`
	// MAC is the matched MAC, or the posted ones separated by commas.
	MAC string `json:"mac,omitempty"`
	// Serial is the posted DMI system serial.
	Serial string `json:"serial,omitempty"`
	// ClientIP is the address the request came from.
	ClientIP string `json:"client_ip,omitempty"`
	// Status is the HTTP status of the reply.
	Status int `json:"status,omitempty"`
	// Detail says why, in words (for example the match reason).
	Detail string `json:"detail,omitempty"`
	// BootMode and SecureBoot are what an [Installed] event's webhook
	// said of the installed machine (its boot-info): "efi" or "bios",
	// and whether Secure Boot was on; empty and nil when it did not say.
	BootMode   string `json:"boot_mode,omitempty"`
	SecureBoot *bool  `json:"secure_boot,omitempty"`
}

// Record is an event as a [Store] keeps it: with its id, which a reader
// passes back to resume after it.
type Record struct {
	// ID names the event's place in its store; ids are opaque.
	ID string
	// Event is the event.
	Event Event
}

// FromNow, as the id to read or follow after, asks for the events
// appended from now on only. The empty id asks for the oldest kept.
const FromNow = "now"

// ErrBadID is matched by the error of [Store.Read] and [Store.Follow]
// for an id the store never gave (malformed, or of another store).
var ErrBadID = errors.New("not an event id of this store")

// KindFollower is a [Store] that can follow the events of some kinds
// only and skip the others without decoding them: a window following
// the BMC actions other processes record would otherwise decode each
// of its own boot steps again.
type KindFollower interface {
	// FollowKinds is [Store.Follow] for the events whose kind is one of
	// kinds.
	FollowKinds(ctx context.Context, after string, kinds []Kind, fn func(Record) error) error
}

// FollowKinds follows s's events whose kind is one of kinds: through
// s's own [KindFollower] when it has one, else through [Store.Follow],
// dropping the others.
func FollowKinds(ctx context.Context, s Store, after string, kinds []Kind, fn func(Record) error) error {
	if kf, ok := s.(KindFollower); ok {
		return kf.FollowKinds(ctx, after, kinds, fn)
	}
	return s.Follow(ctx, after, func(r Record) error {
		if slices.Contains(kinds, r.Event.Kind) {
			return fn(r)
		}
		return nil
	})
}
