package folder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/lockfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// Names of the store's files in the state folder.
const (
	InboxFile     = "discovered.json"
	inboxLockName = "discovered.lock"
)

// Inbox is the inbox in one state folder.
type Inbox struct {
	dir    string
	limits discovery.Limits
	mu     sync.Mutex
}

var _ discovery.Store = (*Inbox)(nil)

// OpenInbox returns the inbox of the state folder dir, which must exist;
// nothing is read or written until it is used.
func OpenInbox(dir string, l discovery.Limits) (*Inbox, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("discovery inbox: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("discovery inbox: %s is not a folder", dir)
	}
	return &Inbox{dir: dir, limits: l.WithDefaults()}, nil
}

// inboxFile is the file's form.
type inboxFile struct {
	Machines []discovery.Record `json:"machines"`
}

// Put records report by the rule of [discovery.Put].
func (s *Inbox) Put(ctx context.Context, report discovery.Report, now time.Time) (discovery.Record, error) {
	var rec discovery.Record
	err := s.update(ctx, func(recs []discovery.Record) ([]discovery.Record, error) {
		out, r, err := discovery.Put(recs, report, now, s.limits)
		rec = r
		return out, err
	})
	return rec, err
}

// List returns the entries live at now, oldest first.
func (s *Inbox) List(ctx context.Context, now time.Time) ([]discovery.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := s.read()
	if err != nil {
		return nil, err
	}
	return discovery.Live(recs, now, s.limits), nil
}

// Remove removes the entry with id.
func (s *Inbox) Remove(ctx context.Context, id string) error {
	return s.update(ctx, func(recs []discovery.Record) ([]discovery.Record, error) {
		for i, r := range recs {
			if r.ID == id {
				return append(recs[:i:i], recs[i+1:]...), nil
			}
		}
		return nil, fmt.Errorf("discovery: %w with ID %q", discovery.ErrNotFound, id)
	})
}

// update reads the file, applies f and writes its result, under the
// process's mutex and the folder's lock file; an error of f writes
// nothing.
func (s *Inbox) update(ctx context.Context, f func([]discovery.Record) ([]discovery.Record, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	lk, err := lockfile.Acquire(ctx, filepath.Join(s.dir, inboxLockName), "discovery inbox", 5*time.Millisecond)
	if err != nil {
		return fmt.Errorf("discovery inbox: %w", err)
	}
	defer lk.Unlock()
	recs, err := s.read()
	if err != nil {
		return err
	}
	out, err := f(recs)
	if err != nil {
		return err
	}
	data, err := json.Marshal(inboxFile{Machines: out})
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(s.dir, InboxFile), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("discovery inbox: %w", err)
	}
	return nil
}

// read reads the file: no file is an empty inbox. Its size is bounded
// by what the limits let it hold.
func (s *Inbox) read() ([]discovery.Record, error) {
	limit := int64(s.limits.Max+1) * (2*discovery.MaxReportBytes + 512)
	data, err := regularfile.Read(filepath.Join(s.dir, InboxFile), limit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovery inbox: %w", err)
	}
	var f inboxFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("discovery inbox %s: %w", filepath.Join(s.dir, InboxFile), err)
	}
	return f.Machines, nil
}
