package window

import (
	"context"
	"time"
)

// Store holds a state's window: the record of the window that serves it
// and who holds its window lock. Package pxe/store/folder's Window is the
// state folder's; the server that holds the lock ([Lock]) is the one
// that writes the record.
type Store interface {
	// Read returns the window's record; none is an error wrapping
	// fs.ErrNotExist.
	Read(ctx context.Context) (*Record, error)
	// Write records w.
	Write(ctx context.Context, w *Record) error
	// Remove removes the record if it is still process pid's.
	Remove(ctx context.Context, pid int) error
	// Holder returns the window holding the lock, nil for none.
	Holder(ctx context.Context) (*HeldError, error)
}

// SiteStore keeps the site's window and the hosts that follow it. Each call
// is bounded by the store's own timeout as well as ctx.
type SiteStore interface {
	// Read returns the recorded window, nil when none is (a recorded
	// window may have passed its deadline: see [Site.OpenAt]).
	Read(ctx context.Context) (*Site, error)
	// Open records w, unless a window is open at w.Opened: then it
	// returns an [*OpenError] naming it. A window past its deadline is
	// replaced.
	Open(ctx context.Context, w Site) error
	// Close removes the recorded window, reporting whether it was open.
	Close(ctx context.Context) (bool, error)
	// End removes the recorded window if it is still w (another opening
	// is left alone): a host ends a window at its deadline so.
	End(ctx context.Context, w Site) error
	// Advertise records h, replacing the host of its name.
	Advertise(ctx context.Context, h Host) error
	// Hosts returns the hosts seen at or after since, by name.
	Hosts(ctx context.Context, since time.Time) ([]Host, error)
	// Changes returns a channel that receives (coalesced) when the
	// window may have changed, until ctx ends. A follower still polls:
	// a change can be missed while the store cannot be reached.
	Changes(ctx context.Context) <-chan struct{}
}
