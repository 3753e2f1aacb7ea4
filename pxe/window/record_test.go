package window

import (
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWindowRecord(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no record: %v", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	w := &Record{PID: os.Getpid(), HTTP: "127.0.0.1:8090", URL: "http://127.0.0.1:8090/answer", Started: now, Deadline: now.Add(time.Hour)}
	if err := Write(dir, w); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	tests := map[string]struct {
		w    Record
		at   time.Time
		open bool
	}{
		"a live process before its deadline is open": {Record{PID: os.Getpid(), Deadline: now.Add(time.Hour)}, now, true},
		"past the deadline it is closed":             {Record{PID: os.Getpid(), Deadline: now.Add(time.Hour)}, now.Add(2 * time.Hour), false},
		"a dead process is closed":                   {Record{PID: 1 << 30, Deadline: now.Add(time.Hour)}, now, false},
		"no deadline stays open while alive":         {Record{PID: os.Getpid()}, now.Add(1000 * time.Hour), true},
	}
	for name, tc := range tests {
		if got := tc.w.Open(tc.at); got != tc.open {
			t.Errorf("%s: Open = %v", name, got)
		}
	}
	if left := w.Left(now); left != time.Hour {
		t.Errorf("Left = %v, want 1h", left)
	}
	if err := Remove(dir, 12345); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); err != nil {
		t.Error("Remove removed another process's record")
	}
	if err := Remove(dir, os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("record left after Remove: %v", err)
	}
}
