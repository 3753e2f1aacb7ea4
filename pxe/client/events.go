package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/backend"
)

// FromNow as Events' lastID asks for new events only.
const FromNow = apitype.FromNow

// maxEventLine bounds one line of the event stream.
const maxEventLine = 1 << 20

// ErrStop may be returned by an [Client.Events] callback to end the
// stream; Events then returns nil.
var ErrStop = errors.New("stop the event stream")

// Events follows the server's event stream: fn gets each event with its
// id, in order, from after lastID ("" for every event kept, [FromNow] for
// new ones only). When the connection is lost it reconnects with backoff,
// resuming after the last event fn got, until ctx ends (Events then
// returns ctx's error) or fn returns an error (returned, but nil for
// [ErrStop]). A refusal (401, 403, 400) ends it at once.
func (c *Client) Events(ctx context.Context, lastID string, fn func(id string, e backend.Event) error) error {
	wait := c.backoff
	for {
		got, err := c.stream(ctx, &lastID, fn)
		if errors.Is(err, ErrStop) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var fnErr *callbackError
		if errors.As(err, &fnErr) {
			return fnErr.err
		}
		if err != nil && !retryable(ctx, err) {
			return err
		}
		if got {
			wait = c.backoff
		}
		c.log.Warn("node-provisioner API: event stream lost; reconnecting", "in", wait.String(), "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, maxBackoff)
	}
}

type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }
func (e *callbackError) Unwrap() error { return e.err }

// stream reads one connection's events; it reports whether it got any.
func (c *Client) stream(ctx context.Context, lastID *string, fn func(string, backend.Event) error) (bool, error) {
	hr, err := c.newRequest(ctx, request{method: "GET", path: "/events"}, nil)
	if err != nil {
		return false, err
	}
	hr.Header.Set("Accept", "text/event-stream")
	if *lastID != "" {
		hr.Header.Set("Last-Event-ID", *lastID)
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		return false, fmt.Errorf("node-provisioner API event stream: %w", transportError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, refusal(resp, opRead)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return false, fmt.Errorf("node-provisioner API event stream: content type %q, want text/event-stream", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), maxEventLine)
	got := false
	var id string
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() > 0 {
				var e backend.Event
				if err := json.Unmarshal([]byte(data.String()), &e); err != nil {
					return got, fmt.Errorf("node-provisioner API event stream: malformed event %s: %w", id, err)
				}
				if err := fn(id, e); err != nil {
					return got, &callbackError{err}
				}
				got = true
				if id != "" {
					*lastID = id
				}
			}
			id = ""
			data.Reset()
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimPrefix(strings.TrimPrefix(line, "id:"), " ")
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil {
		return got, fmt.Errorf("node-provisioner API event stream: %w", err)
	}
	return got, errors.New("node-provisioner API event stream: the server ended it")
}
