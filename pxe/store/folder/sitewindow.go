package folder

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
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// errBadRecord is wrapped by the error of a record that does not parse;
// [SiteWindow.Open] replaces it.
var errBadRecord = errors.New("the record does not parse")

// maxSiteWindow bounds the record read: 64 KiB.
const maxSiteWindow = 64 << 10

// SiteWindow is the site's window of one host's state folder: the record
// is <state-dir>/api/window.json; the hosts are kept in memory, since one
// daemon runs on a state folder. Safe for concurrent use; one process
// writes it.
type SiteWindow struct {
	path string

	mu      sync.Mutex
	hosts   map[string]window.Host
	waiters []chan struct{}
}

var _ window.SiteStore = (*SiteWindow)(nil)

// OpenSiteWindow returns the site's window of the state folder stateDir
// (its api folder created 0700 on the first write). It does no I/O.
func OpenSiteWindow(stateDir string) *SiteWindow {
	return &SiteWindow{path: filepath.Join(stateDir, apitoken.DirName, window.FileName), hosts: map[string]window.Host{}}
}

// Read returns the recorded window, nil for none.
func (d *SiteWindow) Read(context.Context) (*window.Site, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.read()
}

func (d *SiteWindow) read() (*window.Site, error) {
	data, err := regularfile.Read(d.path, maxSiteWindow)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("site window record: %w", err)
	}
	var w window.Site
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("site window record %s: %w: %w", d.path, errBadRecord, err)
	}
	return &w, nil
}

// Open records w unless a window is open at w.Opened.
func (d *SiteWindow) Open(_ context.Context, w window.Site) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur, err := d.read()
	if err != nil && !errors.Is(err, errBadRecord) {
		return err // unreadable; a record that does not parse is replaced
	}
	if cur.OpenAt(w.Opened) {
		return &window.OpenError{Current: *cur}
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
func (d *SiteWindow) Close(context.Context) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur, _ := d.read()
	if err := d.remove(); err != nil {
		return false, err
	}
	return cur.OpenAt(time.Now()), nil
}

// End removes the record if it is still w.
func (d *SiteWindow) End(_ context.Context, w window.Site) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur, err := d.read()
	if err == nil && cur != nil && !cur.Same(&w) {
		return nil
	}
	return d.remove()
}

func (d *SiteWindow) remove() error {
	if err := os.Remove(d.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("site window record: %w", err)
	}
	d.changed()
	return nil
}

// Advertise keeps h in memory.
func (d *SiteWindow) Advertise(_ context.Context, h window.Host) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hosts[h.Name] = h
	return nil
}

// Hosts returns the hosts seen at or after since, by name.
func (d *SiteWindow) Hosts(_ context.Context, since time.Time) ([]window.Host, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []window.Host
	for _, h := range d.hosts {
		if !h.Seen.Before(since) {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b window.Host) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Changes receives after each Open, Close and End through d.
func (d *SiteWindow) Changes(ctx context.Context) <-chan struct{} {
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
func (d *SiteWindow) changed() {
	for _, ch := range d.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
