package netboot

import (
	"net/netip"
	"sync"
	"time"
)

// The answer endpoint slows a source that keeps being refused for
// guesses that missed (401 and 404: a body of made-up MACs after
// another, a token guessed again). A source is an IPv4 address or an
// IPv6 /64 ([source.OfRemote]), so that rotating addresses within a /64 is
// no escape. Only new guesses count: a machine posting the same system
// info again (an installer retrying, a burst of one machine's requests)
// is the same guess. After refusalsFree refusals within refusalWindow
// each further request of that source waits before it is looked at,
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

// refusals counts the answer refusals of each source ([source.OfRemote]).
type refusals struct {
	mu   sync.Mutex
	max  time.Duration
	seen map[netip.Prefix]*refusalCount
}

func newRefusals(max time.Duration) *refusals {
	return &refusals{max: max, seen: map[netip.Prefix]*refusalCount{}}
}

// delay is how long a request of the source src waits before it is
// looked at.
func (r *refusals) delay(src netip.Prefix, now time.Time) time.Duration {
	if r == nil || r.max <= 0 {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.seen[src]
	if c == nil || now.Sub(c.first) >= refusalWindow {
		return 0
	}
	over := c.n - refusalsFree
	if over < 0 {
		return 0
	}
	d := refusalStep << min(over, 16)
	return min(d, r.max)
}

// refused counts a refusal of the source src for the guess (a digest of
// what the request named), unless that guess was counted already.
func (r *refusals) refused(src netip.Prefix, guess [32]byte, now time.Time) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.seen[src]
	if c == nil || now.Sub(c.first) >= refusalWindow {
		if len(r.seen) >= refusalSources {
			for k, v := range r.seen {
				if now.Sub(v.first) >= refusalWindow || len(r.seen) >= refusalSources {
					delete(r.seen, k)
				}
			}
		}
		c = &refusalCount{first: now, seen: map[[32]byte]bool{}}
		r.seen[src] = c
	}
	if c.seen[guess] {
		return
	}
	if len(c.seen) < maxGuesses {
		c.seen[guess] = true
	}
	c.n++
}

// served forgets the refusals of the source src, which got an answer.
func (r *refusals) served(src netip.Prefix) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, src)
}
