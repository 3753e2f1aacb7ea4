package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"
)

// lag is how far behind the event log is during a storm: for each event
// written, the time from the event's own timestamp to its line appearing
// in the file, as a follower of the log (status --watch, the API's event
// stream) sees it.
type lag struct {
	Events int            `json:"count"`
	P50ms  float64        `json:"behind_p50_ms"`
	P99ms  float64        `json:"behind_p99_ms"`
	MaxMs  float64        `json:"behind_max_ms"`
	ByKind map[string]int `json:"by_kind"`
}

// follower reads lines appended to an event log.
type follower struct {
	done   chan struct{}
	result chan *lag
}

// follow starts reading path from its current end, polling every
// millisecond; a log that does not exist yet (its store creates it with
// its first event) is read from its start once it appears.
func follow(path string) (*follower, error) {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f = nil
	case err != nil:
		return nil, fmt.Errorf("events: %w", err)
	default:
		if _, err := f.Seek(0, io.SeekEnd); err != nil {
			f.Close()
			return nil, fmt.Errorf("events: %w", err)
		}
	}
	fl := &follower{done: make(chan struct{}), result: make(chan *lag, 1)}
	go func() {
		for f == nil {
			select {
			case <-fl.done:
				fl.result <- &lag{ByKind: map[string]int{}}
				return
			case <-time.After(time.Millisecond):
			}
			if f, err = os.Open(path); err != nil {
				f = nil
			}
		}
		defer f.Close()
		var behind []time.Duration
		kinds := map[string]int{}
		rd := bufio.NewReader(f)
		var partial []byte
		stopping := false
		var quiet time.Time
		for {
			line, err := rd.ReadBytes('\n')
			if len(line) > 0 && err == nil {
				now := time.Now()
				line = append(partial, line...)
				partial = nil
				var e struct {
					Time time.Time `json:"time"`
					Kind string    `json:"kind"`
				}
				if json.Unmarshal(line, &e) == nil && !e.Time.IsZero() {
					behind = append(behind, now.Sub(e.Time))
					kinds[e.Kind]++
				}
				quiet = time.Time{}
				continue
			}
			partial = append(partial, line...)
			select {
			case <-fl.done:
				stopping = true
			default:
			}
			if stopping {
				// Read on until the log is quiet for 500 ms: a writer
				// that buffers still flushes what the storm made.
				if quiet.IsZero() {
					quiet = time.Now()
				} else if time.Since(quiet) > 500*time.Millisecond {
					break
				}
			}
			time.Sleep(time.Millisecond)
		}
		l := &lag{Events: len(behind), ByKind: kinds}
		if len(behind) > 0 {
			slices.Sort(behind)
			p := func(q float64) float64 {
				return float64(behind[min(len(behind)-1, int(q*float64(len(behind))))].Microseconds()) / 1000
			}
			l.P50ms, l.P99ms, l.MaxMs = p(0.5), p(0.99), p(1)
		}
		fl.result <- l
	}()
	return fl, nil
}

// stop ends the following once the log is quiet and returns the lag.
func (f *follower) stop() *lag {
	close(f.done)
	return <-f.result
}
