package idempotency

import (
	"context"
	"time"
)

// TTL is how long a reply is kept for repeats.
const TTL = 24 * time.Hour

// Store is the store of idempotency records: the reply of each POST by
// its Idempotency-Key, kept for [TTL], so that a repeat (also after a
// restart) gets the same reply.
type Store interface {
	// Lock serialises the requests of one key; the func unlocks. It
	// waits at most until ctx ends.
	Lock(ctx context.Context, key string) (unlock func())
	// Get returns the reply kept for key, nil for none (or one past its
	// day).
	Get(ctx context.Context, key string) (*Reply, error)
	// Put keeps r for key.
	Put(ctx context.Context, key string, r Reply) error
}

// Reply is a kept reply.
type Reply struct {
	// Request is the hex SHA-256 of the token name, method, path and
	// body of the first request.
	Request string    `json:"request"`
	Status  int       `json:"status"`
	Body    string    `json:"body"`
	Time    time.Time `json:"time"`
}
