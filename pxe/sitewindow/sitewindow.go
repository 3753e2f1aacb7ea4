package sitewindow

import (
	"context"
	"fmt"
	"time"

	"github.com/plasmactl/plasma-node/pxe/window"
)

// Window is the site's window: open from Opened until Deadline.
type Window struct {
	// Opened is when it was opened.
	Opened time.Time `json:"opened"`
	// Deadline is when it closes.
	Deadline time.Time `json:"deadline"`
	// SecureBoot offers every UEFI x86-64 machine the Secure Boot chain.
	SecureBoot bool `json:"secure_boot,omitempty"`
	// Discover boots unregistered machines into discovery.
	Discover bool `json:"discover,omitempty"`
	// By names the host that opened it.
	By string `json:"by,omitempty"`
}

// OpenAt reports whether w is open at now: recorded, and its deadline not
// passed.
func (w *Window) OpenAt(now time.Time) bool {
	return w != nil && now.Before(w.Deadline)
}

// Same reports whether w and o are the same opening of the window.
func (w *Window) Same(o *Window) bool {
	return w != nil && o != nil && w.Opened.Equal(o.Opened) && w.Deadline.Equal(o.Deadline)
}

// Host is a provisioner host following the site's window.
type Host struct {
	// Name is the host's name (its hostname, or as configured).
	Name string `json:"name"`
	// API is the address its management API listens on.
	API string `json:"api,omitempty"`
	// HTTP is its window's HTTP address and URL its answer URL, while
	// it serves.
	HTTP string `json:"http,omitempty"`
	URL  string `json:"url,omitempty"`
	// Serving says its servers run the site's window.
	Serving bool `json:"serving"`
	// Seen is when it last said so.
	Seen time.Time `json:"seen"`
}

// OpenError is [Store.Open]'s refusal while the site's window is open.
// It matches [window.ErrOpen].
type OpenError struct {
	// Current is the open window.
	Current Window
}

// Error names who opened the window, when, and its deadline.
func (e *OpenError) Error() string {
	by := e.Current.By
	if by == "" {
		by = "a host of the site"
	}
	return fmt.Sprintf("%s: the site's window, opened by %s at %s, is open until %s",
		window.ErrOpen, by, e.Current.Opened.UTC().Format(time.RFC3339), e.Current.Deadline.UTC().Format(time.RFC3339))
}

// Is makes an OpenError match [window.ErrOpen].
func (e *OpenError) Is(target error) bool { return target == window.ErrOpen }

// Store keeps the site's window and the hosts that follow it. Each call
// is bounded by the store's own timeout as well as ctx.
type Store interface {
	// Read returns the recorded window, nil when none is (a recorded
	// window may have passed its deadline: see [Window.OpenAt]).
	Read(ctx context.Context) (*Window, error)
	// Open records w, unless a window is open at w.Opened: then it
	// returns an [*OpenError] naming it. A window past its deadline is
	// replaced.
	Open(ctx context.Context, w Window) error
	// Close removes the recorded window, reporting whether it was open.
	Close(ctx context.Context) (bool, error)
	// End removes the recorded window if it is still w (another opening
	// is left alone): a host ends a window at its deadline so.
	End(ctx context.Context, w Window) error
	// Advertise records h, replacing the host of its name.
	Advertise(ctx context.Context, h Host) error
	// Hosts returns the hosts seen at or after since, by name.
	Hosts(ctx context.Context, since time.Time) ([]Host, error)
	// Changes returns a channel that receives (coalesced) when the
	// window may have changed, until ctx ends. A follower still polls:
	// a change can be missed while the store cannot be reached.
	Changes(ctx context.Context) <-chan struct{}
}
