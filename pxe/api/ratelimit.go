package api

import (
	"net/netip"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/pxe/internal/source"
)

// maxTracked bounds the addresses and prefixes the limiter follows, so
// that a flood of addresses cannot grow it.
const maxTracked = 10000

// limiter counts failed authentications two-level ([source.Levels]):
// each address is a client refused after max failures within window, and
// the addresses of one IPv6 /64 together after [source.PrefixShare] times
// that, so that a segment's machines do not share one client's failures
// while rotating addresses within a /64 is no escape. A refused level
// stays refused until the window that began with its first failure has
// passed.
type limiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	seen   map[netip.Prefix]*failures
}

type failures struct {
	n     int
	first time.Time
}

func newLimiter(max int, window time.Duration) *limiter {
	return &limiter{max: max, window: window, seen: map[netip.Prefix]*failures{}}
}

// blocked returns how long the client at a is still refused, 0 when it
// is not: the longest of its refused levels.
func (l *limiter) blocked(a netip.Addr, now time.Time) time.Duration {
	ls, n := source.Levels(a, l.max)
	l.mu.Lock()
	defer l.mu.Unlock()
	var wait time.Duration
	for _, lv := range ls[:n] {
		f := l.seen[lv.Key]
		if f == nil {
			continue
		}
		end := f.first.Add(l.window)
		if !now.Before(end) {
			delete(l.seen, lv.Key)
			continue
		}
		if f.n >= lv.Bound {
			wait = max(wait, end.Sub(now))
		}
	}
	return wait
}

// fail counts a failed authentication of the client at a, at its
// address and its /64.
func (l *limiter) fail(a netip.Addr, now time.Time) {
	ls, n := source.Levels(a, l.max)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, lv := range ls[:n] {
		f := l.seen[lv.Key]
		if f == nil || !now.Before(f.first.Add(l.window)) {
			if len(l.seen) >= maxTracked {
				source.Prune(l.seen, maxTracked, func(f *failures) bool { return !now.Before(f.first.Add(l.window)) })
			}
			f = &failures{first: now}
			l.seen[lv.Key] = f
		}
		f.n++
	}
}
