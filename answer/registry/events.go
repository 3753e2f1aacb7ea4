package registry

import (
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"syscall"

	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// EventsFileName is the event log's name in the state folder.
const EventsFileName = "events.jsonl"

// Event is one line of the event log: an answer-side request and what
// came of it ([backend.Event]). An event never holds a secret.
type Event = backend.Event

// EventLog appends events to a JSON-lines file. Each event is one write
// to a file opened with O_APPEND, so concurrent writers (goroutines or
// processes) never interleave within a line. Safe for concurrent use.
//
// The log is bounded: once it holds [MaxEventLogSize] bytes it is renamed
// to <path>.1 (replacing an older one) and a new file is started, so the
// two never hold more than twice that.
type EventLog struct {
	mu   sync.Mutex
	f    *os.File
	path string
	size int64
	max  int64
}

// MaxEventLogSize is the size at which the event log is rotated: 8 MiB,
// tens of thousands of events, enough for the history of many windows.
const MaxEventLogSize = 8 << 20

// OpenEventLog opens path for appending, creating it with mode 0600. If
// the file does not end in a newline (a writer died mid-line), it adds
// one, so the torn line stays a line of its own.
func OpenEventLog(path string) (*EventLog, error) {
	f, err := openAppend(path)
	if err != nil {
		return nil, fmt.Errorf("open event log %s: %w", path, err)
	}
	if torn, err := endsTorn(path); err != nil {
		f.Close()
		return nil, fmt.Errorf("open event log %s: %w", path, err)
	} else if torn {
		if _, err := f.Write([]byte("\n")); err != nil {
			f.Close()
			return nil, fmt.Errorf("open event log %s: %w", path, err)
		}
	}
	l := &EventLog{f: f, path: path, max: MaxEventLogSize}
	if fi, err := f.Stat(); err == nil {
		l.size = fi.Size()
	}
	return l, nil
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

// Append writes e as one JSON line.
func (l *EventLog) Append(e Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("append event: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("append event: %w", os.ErrClosed)
	}
	if l.size+int64(len(line)) > l.max && l.size > 0 {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	n, err := l.f.Write(line)
	l.size += int64(n)
	if err != nil {
		return fmt.Errorf("append event to %s: %w", l.f.Name(), err)
	}
	return nil
}

// rotate renames the full log to <path>.1 and starts a new one.
func (l *EventLog) rotate() error {
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		return fmt.Errorf("rotate event log %s: %w", l.path, err)
	}
	f, err := openAppend(l.path)
	if err != nil {
		return fmt.Errorf("rotate event log %s: %w", l.path, err)
	}
	l.f.Close()
	l.f, l.size = f, 0
	return nil
}

// Close closes the file; later appends fail.
func (l *EventLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// ReadEventLog returns the events of the log at path, the rotated part
// (<path>.1) first: all an [EventLog] keeps.
func ReadEventLog(path string) ([]Event, error) {
	old, err := ReadEvents(path + ".1")
	if err != nil {
		return nil, err
	}
	cur, err := ReadEvents(path)
	return append(old, cur...), err
}

// ReadEvents returns the events in path in file order. A line that is not
// a JSON event, which only a writer killed mid-write leaves (the last
// line, or an earlier one that [OpenEventLog] closed off), is skipped. A
// missing file gives no events and no error.
func ReadEvents(path string) ([]Event, error) {
	f, err := regularfile.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read events %s: %w", path, err)
	}
	defer f.Close()
	var out []Event
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var e Event
			if json.Unmarshal(t, &e) == nil {
				out = append(out, e)
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read events %s: %w", path, err)
		}
	}
}
