package window

import (
	"fmt"
	"time"
)

// Site is the site's window: open from Opened until Deadline.
type Site struct {
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
func (w *Site) OpenAt(now time.Time) bool {
	return w != nil && now.Before(w.Deadline)
}

// Same reports whether w and o are the same opening of the window.
func (w *Site) Same(o *Site) bool {
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

// OpenError is [SiteStore.Open]'s refusal while the site's window is open.
// It matches [ErrOpen].
type OpenError struct {
	// Current is the open window.
	Current Site
}

// Error names who opened the window, when, and its deadline.
func (e *OpenError) Error() string {
	by := e.Current.By
	if by == "" {
		by = "a host of the site"
	}
	return fmt.Sprintf("%s: the site's window, opened by %s at %s, is open until %s",
		ErrOpen, by, e.Current.Opened.UTC().Format(time.RFC3339), e.Current.Deadline.UTC().Format(time.RFC3339))
}

// Is makes an OpenError match [ErrOpen].
func (e *OpenError) Is(target error) bool { return target == ErrOpen }
