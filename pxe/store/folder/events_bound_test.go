package folder

import (
	"os"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// TestEventLogIsRotatedBySize: a flood of events keeps the log and its
// rotated part under twice the bound, and nothing of the last events is
// lost.
func TestEventLogIsRotatedBySize(t *testing.T) {
	path := EventsPath(t.TempDir())
	l := OpenEvents(path, EventsOptions{MaxSize: 64 << 10})
	defer l.Close()
	detail := strings.Repeat("x", 200)
	for range 5000 {
		if err := l.Append(t.Context(), events.Event{Kind: events.Refused, Status: 400, Detail: detail}); err != nil {
			t.Fatal(err)
		}
	}
	var total int64
	for _, p := range []string{path, path + ".1"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > l.max {
			t.Errorf("%s holds %d bytes, over the bound %d", p, fi.Size(), l.max)
		}
		total += fi.Size()
	}
	evs, err := readEvents(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || int64(len(evs))*250 > 2*l.max {
		t.Errorf("%d events kept in %d bytes", len(evs), total)
	}
}
