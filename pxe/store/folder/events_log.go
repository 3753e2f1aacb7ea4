package folder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// eventsFile is the event log's name in the state folder.
const eventsFile = "events.jsonl"

// defaultEventsMax is the size at which the event log is rotated by default:
// 8 MiB, tens of thousands of events, enough for the history of many
// windows.
const defaultEventsMax = 8 << 20

// defaultEventsPoll is how often [Events.Follow] looks for events other
// processes appended; this process's own appends wake it at once. A
// look that finds nothing is a read(2) and a stat(2); at 200 ms, a
// daemon streaming a window's events ran 150 ms behind it at the median
// and over 500 ms at the 99th percentile during a 1 000-machine storm.
const defaultEventsPoll = 50 * time.Millisecond

// EventsPath returns the event log's path in stateDir.
func EventsPath(stateDir string) string { return filepath.Join(stateDir, eventsFile) }

// EventsOptions tune an [Events]; the zero value is the default.
type EventsOptions struct {
	// MaxSize is the size in bytes at which the log is rotated. Zero
	// means 8 MiB.
	MaxSize int64
	// Poll is how often Follow looks for other processes' events. Zero
	// means 50 ms.
	Poll time.Duration
}

// Events is the event log at one path, an [events.Store]. Each event is
// one write to a file opened with O_APPEND, so concurrent writers
// (goroutines or processes) never interleave within a line.
//
// The log is bounded: once it holds MaxSize bytes it is renamed to
// <path>.1 (replacing an older one) and a new file is started, so the
// two never hold more than twice that.
//
// Several writers, in one process or several, append and rotate under
// an exclusive lock (flock) of <path>.lock: each checks, under it, that
// its file is still the log (another writer may have rotated it away)
// and how large the log is, so no event lands in a rotated part after a
// reader moved on, and no writer rotates by a size it counted alone.
//
// The file is opened for appending on the first Append, so an Events that
// only reads creates nothing. Open one Events per log in a process and
// share it: its followers learn of its appends at once. Safe for
// concurrent use.
type Events struct {
	path string
	max  int64
	poll time.Duration

	mu   sync.Mutex
	f    *os.File // the log, as this Events last opened it
	lock *os.File // <path>.lock, flock'd around each append
	shut bool
	buf  []byte // an append's lines, kept for the next (under mu)

	// woken is closed (and replaced) by each append, to wake followers.
	wakeMu sync.Mutex
	woken  chan struct{}
}

var _ events.Store = (*Events)(nil)

// OpenEvents returns the store of the event log at path. It does no I/O.
func OpenEvents(path string, opts EventsOptions) *Events {
	if opts.MaxSize <= 0 {
		opts.MaxSize = defaultEventsMax
	}
	if opts.Poll <= 0 {
		opts.Poll = defaultEventsPoll
	}
	return &Events{path: path, max: opts.MaxSize, poll: opts.Poll, woken: make(chan struct{})}
}

// EventsPath returns the log's path.
func (s *Events) Path() string { return s.path }

// openFile opens the log for appending, creating it with mode 0600. If
// the file does not end in a newline (a writer died mid-line), it adds
// one, so the torn line stays a line of its own. Called with mu held.
func (s *Events) openFile() error {
	f, err := openAppend(s.path)
	if err != nil {
		return fmt.Errorf("open event log %s: %w", s.path, err)
	}
	if torn, err := endsTorn(s.path); err != nil {
		f.Close()
		return fmt.Errorf("open event log %s: %w", s.path, err)
	} else if torn {
		if _, err := f.Write([]byte("\n")); err != nil {
			f.Close()
			return fmt.Errorf("open event log %s: %w", s.path, err)
		}
	}
	s.f = f
	return nil
}

// openAppend opens path for appending, creating it with mode 0600,
// without blocking on a FIFO and only if it is a regular file.
func openAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = regularfile.ErrNotRegular
		}
		return nil, err
	}
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func endsTorn(path string) (bool, error) {
	r, err := regularfile.Open(path)
	if err != nil {
		return false, err
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil || fi.Size() == 0 {
		return false, err
	}
	b := make([]byte, 1)
	if _, err := r.ReadAt(b, fi.Size()-1); err != nil {
		return false, err
	}
	return b[0] != '\n', nil
}

// Append writes each of evs as one JSON line, in order.
func (s *Events) Append(_ context.Context, evs ...events.Event) error {
	lines := make([][]byte, 0, len(evs))
	var enc []byte
	for _, e := range evs {
		if e.Time.IsZero() {
			e.Time = time.Now().UTC()
		}
		from := len(enc)
		var err error
		if enc, err = appendEvent(enc, e); err != nil {
			return fmt.Errorf("append event: %w", err)
		}
		enc = append(enc, '\n')
		lines = append(lines, enc[from:len(enc):len(enc)])
	}
	err := s.write(lines)
	s.wake()
	return err
}

func (s *Events) write(lines [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shut {
		return fmt.Errorf("append event: %w", os.ErrClosed)
	}
	if s.lock == nil {
		l, err := openLock(s.path + ".lock")
		if err != nil {
			return fmt.Errorf("append event: %w", err)
		}
		s.lock = l
	}
	if err := flock(s.lock, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("append event: lock %s: %w", s.lock.Name(), err)
	}
	defer flock(s.lock, syscall.LOCK_UN)
	size, err := s.current()
	if err != nil {
		return err
	}
	// The lines go in one write per file, not one each: a batch of a
	// storm's boot steps is one system call.
	buf := s.buf[:0]
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		n, err := s.f.Write(buf)
		size += int64(n)
		buf = buf[:0]
		if err != nil {
			return fmt.Errorf("append event to %s: %w", s.path, err)
		}
		return nil
	}
	for _, line := range lines {
		if pending := size + int64(len(buf)); pending+int64(len(line)) > s.max && pending > 0 {
			if err := flush(); err != nil {
				return err
			}
			if err := s.rotate(); err != nil {
				return err
			}
			size = 0
		}
		buf = append(buf, line...)
	}
	err = flush()
	if cap(buf) <= maxWriteBuffer {
		s.buf = buf
	}
	return err
}

// maxWriteBuffer bounds the buffer an Events keeps between writes.
const maxWriteBuffer = 1 << 20

// current makes s.f the log at path (reopening it when another writer
// rotated it away) and returns its size. Called with the lock held.
func (s *Events) current() (int64, error) {
	if s.f != nil {
		cur, err := os.Stat(s.path)
		mine, ferr := s.f.Stat()
		if err == nil && ferr == nil && os.SameFile(cur, mine) {
			return mine.Size(), nil
		}
		s.f.Close()
		s.f = nil
	}
	if err := s.openFile(); err != nil {
		return 0, err
	}
	fi, err := s.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("append event to %s: %w", s.path, err)
	}
	return fi.Size(), nil
}

// openLock opens (creating, mode 0600) the lock file at path.
func openLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s: %w", path, regularfile.ErrNotRegular)
		}
		return nil, err
	}
	return f, nil
}

// flock applies how (LOCK_EX, LOCK_UN) to f, retrying when interrupted.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// rotate renames the full log to <path>.1 and starts a new one. Called
// with the lock held.
func (s *Events) rotate() error {
	if err := os.Rename(s.path, s.path+".1"); err != nil {
		return fmt.Errorf("rotate event log %s: %w", s.path, err)
	}
	f, err := openAppend(s.path)
	if err != nil {
		return fmt.Errorf("rotate event log %s: %w", s.path, err)
	}
	s.f.Close()
	s.f = f
	return nil
}

// wake tells the followers that events were appended.
func (s *Events) wake() {
	s.wakeMu.Lock()
	close(s.woken)
	s.woken = make(chan struct{})
	s.wakeMu.Unlock()
}

// appended returns a channel closed at the next append.
func (s *Events) appended() <-chan struct{} {
	s.wakeMu.Lock()
	defer s.wakeMu.Unlock()
	return s.woken
}

// Close closes the file; later appends fail. Reads go on.
func (s *Events) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shut = true
	var err error
	if s.f != nil {
		err = s.f.Close()
		s.f = nil
	}
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
	return err
}

// MaxSize returns the size at which the log is rotated.
func (s *Events) MaxSize() int64 { return s.max }
