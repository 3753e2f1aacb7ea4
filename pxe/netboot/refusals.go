package netboot

import (
	"net/netip"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/pxe/internal/source"
)

// The answer endpoint slows a source that keeps being refused for
// guesses that missed (401 and 404: a body of made-up MACs after
// another, a token guessed again). It counts two-level
// ([source.Levels]): each address is a client of its own, and the
// addresses of one IPv6 /64 together are slowed at [source.PrefixShare]
// times the free refusals, so that a segment's machines refused once
// each (booted before they were registered) do not slow each other,
// while rotating addresses within a /64 is no escape. Only new guesses count: a machine posting the same system
// info again (an installer retrying, a burst of one machine's requests)
// is the same guess. After refusalsFree refusals within refusalWindow
// each further request of that client (or /64) waits before it is looked at,
// twice as long each time up to Config.MaxRefusalDelay. The reply is
// what it would have been: a machine that retries is slowed, never
// refused, and an answer served to a source forgets its refusals.
const (
	refusalsFree   = 5
	refusalWindow  = time.Minute
	refusalStep    = 250 * time.Millisecond
	refusalSources = 10000
	// DefaultMaxRefusalDelay is Config.MaxRefusalDelay's default: 4 s.
	DefaultMaxRefusalDelay = 4 * time.Second
)

type refusalCount struct {
	n     int
	first time.Time
	seen  map[[32]byte]bool // the guesses counted, up to maxGuesses
}

// maxGuesses bounds the guesses remembered per source; past it every
// refusal counts.
const maxGuesses = 64

// refusals counts the answer refusals of each address and /64
// ([source.Levels]).
type refusals struct {
	mu   sync.Mutex
	max  time.Duration
	seen map[netip.Prefix]*refusalCount
}

func newRefusals(max time.Duration) *refusals {
	return &refusals{max: max, seen: map[netip.Prefix]*refusalCount{}}
}

// delay is how long a request of the client at a waits before it is
// looked at: by the level (its address, its /64) furthest past its free
// refusals.
func (r *refusals) delay(a netip.Addr, now time.Time) time.Duration {
	if r == nil || r.max <= 0 {
		return 0
	}
	ls, n := source.Levels(a, refusalsFree)
	r.mu.Lock()
	defer r.mu.Unlock()
	over := -1
	for _, l := range ls[:n] {
		if c := r.seen[l.Key]; c != nil && now.Sub(c.first) < refusalWindow {
			over = max(over, c.n-l.Bound)
		}
	}
	if over < 0 {
		return 0
	}
	d := refusalStep << min(over, 16)
	return min(d, r.max)
}

// refused counts a refusal of the client at a, at its address and its
// /64, for the guess (a digest of what the request named), at each level
// unless that level counted the guess already.
func (r *refusals) refused(a netip.Addr, guess [32]byte, now time.Time) {
	if r == nil {
		return
	}
	ls, n := source.Levels(a, refusalsFree)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range ls[:n] {
		c := r.seen[l.Key]
		if c == nil || now.Sub(c.first) >= refusalWindow {
			if len(r.seen) >= refusalSources {
				source.Prune(r.seen, refusalSources, func(c *refusalCount) bool { return now.Sub(c.first) >= refusalWindow })
			}
			c = &refusalCount{first: now, seen: map[[32]byte]bool{}}
			r.seen[l.Key] = c
		}
		if c.seen[guess] {
			continue
		}
		if len(c.seen) < maxGuesses {
			c.seen[guess] = true
		}
		c.n++
	}
}

// served forgets the refusals of the address a, which got an answer, and
// takes them off its /64's.
func (r *refusals) served(a netip.Addr) {
	if r == nil {
		return
	}
	ls, n := source.Levels(a, refusalsFree)
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.seen[ls[0].Key]
	if c == nil {
		return
	}
	delete(r.seen, ls[0].Key)
	if n == 2 {
		if p := r.seen[ls[1].Key]; p != nil {
			if p.n -= c.n; p.n <= 0 {
				delete(r.seen, ls[1].Key)
			}
		}
	}
}
