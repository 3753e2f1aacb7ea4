package api

import (
	"net/netip"
	"sync"
	"time"
)

// maxTracked bounds the sources the limiter follows, so that a flood
// of addresses cannot grow it.
const maxTracked = 10000

// limiter counts failed authentications per source (an IPv4 address or
// an IPv6 /64, [source.OfRemote]): a source with max failures within window
// is refused until the window that began with its first failure has
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

// blocked returns how long the source src is still refused, 0 when it
// is not.
func (l *limiter) blocked(src netip.Prefix, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.seen[src]
	if f == nil {
		return 0
	}
	end := f.first.Add(l.window)
	if !now.Before(end) {
		delete(l.seen, src)
		return 0
	}
	if f.n < l.max {
		return 0
	}
	return end.Sub(now)
}

// fail counts a failed authentication of the source src.
func (l *limiter) fail(src netip.Prefix, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.seen[src]
	if f == nil || !now.Before(f.first.Add(l.window)) {
		if len(l.seen) >= maxTracked {
			l.prune(now)
		}
		f = &failures{first: now}
		l.seen[src] = f
	}
	f.n++
}

// prune forgets expired sources, and others if still full.
func (l *limiter) prune(now time.Time) {
	for src, f := range l.seen {
		if !now.Before(f.first.Add(l.window)) {
			delete(l.seen, src)
		}
	}
	for src := range l.seen {
		if len(l.seen) < maxTracked {
			break
		}
		delete(l.seen, src)
	}
}
