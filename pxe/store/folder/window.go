package folder

import (
	"context"

	"github.com/plasmactl/plasma-node/pxe/window"
)

// Window is the record of the window serving on the host of a state
// folder (window.json) and who holds its lock (window.lock): the
// [window.Store] of the folder, over package window's functions, which
// the serving window calls itself.
type Window string

var _ window.Store = Window("")

// Read is [window.Read] of the folder.
func (d Window) Read(context.Context) (*window.Record, error) { return window.Read(string(d)) }

// Write is [window.Write] into the folder.
func (d Window) Write(_ context.Context, w *window.Record) error { return window.Write(string(d), w) }

// Remove is [window.Remove] in the folder.
func (d Window) Remove(_ context.Context, pid int) error { return window.Remove(string(d), pid) }

// Holder is [window.Holder] of the folder.
func (d Window) Holder(context.Context) (*window.HeldError, error) { return window.Holder(string(d)) }
