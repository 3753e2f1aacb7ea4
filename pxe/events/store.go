package events

import "context"

// Store keeps the events of one state: the events of every writer on
// it, in one order. An implementation is safe for concurrent use, and
// for several processes or hosts appending to the same state where it
// says so (the file store is).
//
// Every store must pass the conformance suite, events/eventstest.
type Store interface {
	// Append adds evs, in order, after every event appended before it
	// returned. A zero Time is set to now.
	Append(ctx context.Context, evs ...Event) error
	// Read returns up to max events (max <= 0: all) after the event of
	// id, oldest first: "" reads from the oldest event kept, [FromNow]
	// reads none. An id whose event the store no longer keeps (its size
	// bound dropped it) reads from the oldest kept. Errors: [ErrBadID].
	Read(ctx context.Context, after string, max int) ([]Record, error)
	// Follow calls fn with each event after the event of id (as Read
	// takes it), then with each one appended later, as soon as it is,
	// until ctx ends (it returns ctx's error) or fn returns an error
	// (returned). Errors: [ErrBadID].
	Follow(ctx context.Context, after string, fn func(Record) error) error
}
