package sitewindow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
)

// FileName is the window's record in the folder of a [Dir].
const FileName = "window.json"

// ErrBadRecord is wrapped by the error of a record that does not parse;
// [Dir.Open] replaces it.
var ErrBadRecord = errors.New("the record does not parse")

// maxRecord bounds the record read: 64 KiB.
const maxRecord = 64 << 10

// Dir is the site's window of one host's state folder: the record is
// FileName in its folder (a daemon's API folder); the hosts are kept in
// memory, since one daemon runs on a state folder. Safe for concurrent
// use; one process writes it.
type Dir struct {
	path string

	mu      sync.Mutex
	hosts   map[string]Host
	waiters []chan struct{}
}

var _ Store = (*Dir)(nil)

// OpenDir returns the store of the folder dir (created 0700 on the first
// write). It does no I/O.
func OpenDir(dir string) *Dir {
	return &Dir{path: filepath.Join(dir, FileName), hosts: map[string]Host{}}
}

// Path returns the record's file.
func (d *Dir) Path() string { return d.path }

// Read returns the recorded window, nil for none.
func (d *Dir) Read(context.Context) (*Window, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.read()
}

func (d *Dir) read() (*Window, error) {
	data, err := regularfile.Read(d.path, maxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("site window record: %w", err)
	}
	var w Window
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("site window record %s: %w: %w", d.path, ErrBadRecord, err)
	}
	return &w, nil
}

// Open records w unless a window is open at w.Opened.
func (d *Dir) Open(_ context.Context, w Window) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur, err := d.read()
	if err != nil && !errors.Is(err, ErrBadRecord) {
		return err // unreadable; a record that does not parse is replaced
	}
	if cur.OpenAt(w.Opened) {
		return &OpenError{Current: *cur}
	}
	data, err := json.Marshal(w)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(d.path), 0o700); err != nil {
		return fmt.Errorf("site window record: %w", err)
	}
	if err := atomicfile.WriteFile(d.path, data, 0o600); err != nil {
		return fmt.Errorf("site window record: %w", err)
	}
	d.changed()
	return nil
}

// Close removes the record, reporting whether its window was open.
func (d *Dir) Close(context.Context) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur, _ := d.read()
	if err := d.remove(); err != nil {
		return false, err
	}
	return cur.OpenAt(time.Now()), nil
}

// End removes the record if it is still w.
func (d *Dir) End(_ context.Context, w Window) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur, err := d.read()
	if err == nil && cur != nil && !cur.Same(&w) {
		return nil
	}
	return d.remove()
}

func (d *Dir) remove() error {
	if err := os.Remove(d.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("site window record: %w", err)
	}
	d.changed()
	return nil
}

// Advertise keeps h in memory.
func (d *Dir) Advertise(_ context.Context, h Host) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hosts[h.Name] = h
	return nil
}

// Hosts returns the hosts seen at or after since, by name.
func (d *Dir) Hosts(_ context.Context, since time.Time) ([]Host, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Host
	for _, h := range d.hosts {
		if !h.Seen.Before(since) {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b Host) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Changes receives after each Open, Close and End through d.
func (d *Dir) Changes(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	d.mu.Lock()
	d.waiters = append(d.waiters, ch)
	d.mu.Unlock()
	context.AfterFunc(ctx, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.waiters = slices.DeleteFunc(d.waiters, func(c chan struct{}) bool { return c == ch })
	})
	return ch
}

// changed tells the waiters; d.mu is held.
func (d *Dir) changed() {
	for _, ch := range d.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
