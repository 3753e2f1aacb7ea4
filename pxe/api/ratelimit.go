package api

import (
	"sync"
	"time"
)

// maxTracked bounds the addresses the limiter follows, so that a flood
// of addresses cannot grow it.
const maxTracked = 10000

// limiter counts failed authentications per client address: an address
// with max failures within window is refused until the window that
// began with its first failure has passed.
type limiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	seen   map[string]*failures
}

type failures struct {
	n     int
	first time.Time
}

func newLimiter(max int, window time.Duration) *limiter {
	return &limiter{max: max, window: window, seen: map[string]*failures{}}
}

// blocked returns how long ip is still refused, 0 when it is not.
func (l *limiter) blocked(ip string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.seen[ip]
	if f == nil {
		return 0
	}
	end := f.first.Add(l.window)
	if !now.Before(end) {
		delete(l.seen, ip)
		return 0
	}
	if f.n < l.max {
		return 0
	}
	return end.Sub(now)
}

// fail counts a failed authentication of ip.
func (l *limiter) fail(ip string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.seen[ip]
	if f == nil || !now.Before(f.first.Add(l.window)) {
		if len(l.seen) >= maxTracked {
			l.prune(now)
		}
		f = &failures{first: now}
		l.seen[ip] = f
	}
	f.n++
}

// prune forgets expired addresses, and others if still full.
func (l *limiter) prune(now time.Time) {
	for ip, f := range l.seen {
		if !now.Before(f.first.Add(l.window)) {
			delete(l.seen, ip)
		}
	}
	for ip := range l.seen {
		if len(l.seen) < maxTracked {
			break
		}
		delete(l.seen, ip)
	}
}
