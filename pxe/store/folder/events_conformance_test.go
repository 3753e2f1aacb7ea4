package folder_test

import (
	"testing"

	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/events/eventstest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestEventsConformance runs the event stores' suite on the file
// store; the second writer is a second Events on the same log, as a local
// power command beside the daemon opens it.
func TestEventsConformance(t *testing.T) {
	eventstest.Run(t, eventstest.Harness{
		New: func(t eventstest.T, maxBytes int64) events.Store {
			s := folder.OpenEvents(folder.EventsPath(t.TempDir()), folder.EventsOptions{MaxSize: maxBytes})
			t.Cleanup(func() { s.Close() })
			return s
		},
		Writer: func(t eventstest.T, s events.Store) events.Store {
			fs := s.(*folder.Events)
			w := folder.OpenEvents(fs.Path(), folder.EventsOptions{MaxSize: fs.MaxSize()})
			t.Cleanup(func() { w.Close() })
			return w
		},
	})
}
