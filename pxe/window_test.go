package pxe

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
	if _, err := ReadWindow(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no record: %v", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	w := &Window{PID: os.Getpid(), HTTP: "127.0.0.1:8090", URL: "http://127.0.0.1:8090/answer", Started: now, Deadline: now.Add(time.Hour)}
	if err := WriteWindow(dir, w); err != nil {
		t.Fatal(err)
	}
	got, err := ReadWindow(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	tests := map[string]struct {
		w    Window
		at   time.Time
		open bool
	}{
		"a live process before its deadline is open": {Window{PID: os.Getpid(), Deadline: now.Add(time.Hour)}, now, true},
		"past the deadline it is closed":             {Window{PID: os.Getpid(), Deadline: now.Add(time.Hour)}, now.Add(2 * time.Hour), false},
		"a dead process is closed":                   {Window{PID: 1 << 30, Deadline: now.Add(time.Hour)}, now, false},
		"no deadline stays open while alive":         {Window{PID: os.Getpid()}, now.Add(1000 * time.Hour), true},
	}
	for name, tc := range tests {
		if got := tc.w.Open(tc.at); got != tc.open {
			t.Errorf("%s: Open = %v", name, got)
		}
	}
	if left := w.Left(now); left != time.Hour {
		t.Errorf("Left = %v, want 1h", left)
	}
	if err := RemoveWindow(dir, 12345); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadWindow(dir); err != nil {
		t.Error("RemoveWindow removed another process's record")
	}
	if err := RemoveWindow(dir, os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadWindow(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("record left after RemoveWindow: %v", err)
	}
}
