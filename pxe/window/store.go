package window

import "context"

// Store holds a state's window: the record of the window that serves it
// and who holds its window lock. [Dir] is the state folder's; the server
// that holds the lock ([Lock]) is the one that writes the record.
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

// Dir is the [Store] of a state folder: window.json and window.lock.
type Dir string

var _ Store = Dir("")

// Read is [Read] of the folder.
func (d Dir) Read(_ context.Context) (*Record, error) { return Read(string(d)) }

// Write is [Write] into the folder.
func (d Dir) Write(_ context.Context, w *Record) error { return Write(string(d), w) }

// Remove is [Remove] in the folder.
func (d Dir) Remove(_ context.Context, pid int) error { return Remove(string(d), pid) }

// Holder is [Holder] of the folder.
func (d Dir) Holder(_ context.Context) (*HeldError, error) { return Holder(string(d)) }
