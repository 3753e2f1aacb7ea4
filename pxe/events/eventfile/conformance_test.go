package eventfile_test

import (
	"testing"

	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/events/eventfile"
	"github.com/plasmactl/plasma-node/pxe/events/eventstest"
)

// TestFileStoreConformance runs the event stores' suite on the file
// store; the second writer is a second Store on the same log, as a local
// power command beside the daemon opens it.
func TestFileStoreConformance(t *testing.T) {
	eventstest.Run(t, eventstest.Harness{
		New: func(t eventstest.T, maxBytes int64) events.Store {
			s := eventfile.Open(eventfile.Path(t.TempDir()), eventfile.Options{MaxSize: maxBytes})
			t.Cleanup(func() { s.Close() })
			return s
		},
		Writer: func(t eventstest.T, s events.Store) events.Store {
			fs := s.(*eventfile.Store)
			w := eventfile.Open(fs.Path(), eventfile.Options{MaxSize: fs.MaxSize()})
			t.Cleanup(func() { w.Close() })
			return w
		},
	})
}
