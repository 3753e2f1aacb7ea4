package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEventLogIsRotatedBySize: a flood of events keeps the log and its
// rotated part under twice the bound, and nothing of the last events is
// lost.
func TestEventLogIsRotatedBySize(t *testing.T) {
	path := filepath.Join(t.TempDir(), EventsFileName)
	l, err := OpenEventLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.max = 64 << 10
	detail := strings.Repeat("x", 200)
	for range 5000 {
		if err := l.Append(Event{Kind: "refused", Status: 400, Detail: detail}); err != nil {
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
	evs, err := ReadEventLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || int64(len(evs))*250 > 2*l.max {
		t.Errorf("%d events kept in %d bytes", len(evs), total)
	}
}
