package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/client"
)

// apiFollower follows the management API's event stream
// (/api/v1/events) during a storm, as an operator's status --watch
// against a daemon does: for each event, the time from its own
// timestamp to its delivery on the stream.
type apiFollower struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	behind []time.Duration
	kinds  map[string]int
	last   time.Time // when the last event came
	err    error
}

// followAPI connects to url's event stream with token, the server's
// certificate pinned to fingerprint, asking for new events only; it
// returns once the stream has had a moment to connect.
func followAPI(url, token, fingerprint string) (*apiFollower, error) {
	c, err := client.New(client.Options{URL: url, Token: token, Fingerprint: fingerprint})
	if err != nil {
		return nil, fmt.Errorf("api events: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &apiFollower{cancel: cancel, done: make(chan struct{}), kinds: map[string]int{}}
	go func() {
		defer close(f.done)
		err := c.Events(ctx, client.FromNow, func(_ string, e backend.Event) error {
			now := time.Now()
			f.mu.Lock()
			defer f.mu.Unlock()
			f.behind = append(f.behind, now.Sub(e.Time))
			f.kinds[string(e.Kind)]++
			f.last = now
			return nil
		})
		if err != nil && !errors.Is(err, context.Canceled) {
			f.mu.Lock()
			f.err = err
			f.mu.Unlock()
		}
	}()
	// The stream starts from "now": give it time to connect before the
	// storm's first event.
	time.Sleep(time.Second)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, fmt.Errorf("api events: %w", f.err)
	}
	return f, nil
}

// stop waits until the stream has been quiet for 2 s (it polls the log,
// and the window's writer batches boot steps), ends it and returns the
// lag.
func (f *apiFollower) stop() (*lag, error) {
	start := time.Now()
	for {
		f.mu.Lock()
		last := f.last
		f.mu.Unlock()
		if last.IsZero() {
			last = start
		}
		if time.Since(last) > 2*time.Second {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.cancel()
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	l := &lag{Events: len(f.behind), ByKind: f.kinds}
	if len(f.behind) > 0 {
		b := slices.Clone(f.behind)
		slices.Sort(b)
		p := func(q float64) float64 {
			return float64(b[min(len(b)-1, int(q*float64(len(b))))].Microseconds()) / 1000
		}
		l.P50ms, l.P99ms, l.MaxMs = p(0.5), p(0.99), p(1)
	}
	return l, f.err
}
