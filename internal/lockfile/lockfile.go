package lockfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrLocked is returned by [TryLock], and by [Acquire] when its context ends
// first, while another holder has the lock. The error's text names the
// holder.
var ErrLocked = errors.New("locked")

// HeldError is the error of [TryLock], and of [Acquire] when its context
// ends first, while another holder has the lock; it matches [ErrLocked].
// Who, PID and Since are what the holder wrote into the file (zero when it
// wrote nothing readable yet, as between opening and recording).
type HeldError struct {
	// Path is the lock file.
	Path string
	// Who is the holder's description, as given to [TryLock] or
	// [Lock.Relabel].
	Who string
	// PID is the holder's process id.
	PID int
	// Since is when the holder took the lock.
	Since time.Time
}

// Error names the lock file and the holder.
func (e *HeldError) Error() string {
	holder := "another process"
	switch {
	case e.PID > 0:
		holder = fmt.Sprintf("%s (pid %d, since %s)", e.Who, e.PID, e.Since.Format(time.RFC3339))
	case e.Who != "":
		holder = e.Who
	}
	return fmt.Sprintf("%s is %s by %s", e.Path, ErrLocked, holder)
}

// Is makes a HeldError match [ErrLocked].
func (e *HeldError) Is(target error) bool { return target == ErrLocked }

// Lock is a held lock. Release it with [Lock.Unlock].
type Lock struct {
	f *os.File
	// prev is the holder record the file held when the lock was taken,
	// mine the one this holder wrote.
	prev, mine string
}

// TryLock takes the lock on path at once or fails with an error wrapping
// [ErrLocked] that names the holder. who describes this holder (for
// example "plasma-node provision"); it is written into the file with the
// process id and the time.
func TryLock(path, who string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	for i := 0; i < 5 && errors.Is(err, syscall.EWOULDBLOCK); i++ {
		// A [Probe] holds the lock shared for a moment: try again
		// before calling the lock held.
		time.Sleep(time.Millisecond)
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		held := readHolder(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			held.Path = path
			return nil, held
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	l := &Lock{f: f, prev: readRecord(f)}
	if err := l.record(who); err != nil {
		l.Unlock()
		return nil, err
	}
	return l, nil
}

// Acquire waits for the lock on path until ctx ends, polling every
// interval (25 ms when zero). When ctx ends first the error wraps
// [ErrLocked] and names the holder.
func Acquire(ctx context.Context, path, who string, interval time.Duration) (*Lock, error) {
	return AcquireReporting(ctx, path, who, interval, nil)
}

// ReportEvery is how often [AcquireReporting] says it still waits.
const ReportEvery = 10 * time.Second

// AcquireReporting is [Acquire] that calls report, when set, as soon as
// the lock is found held (with its holder) and every [ReportEvery] of
// waiting after, so that a caller can say whom it waits for.
func AcquireReporting(ctx context.Context, path, who string, interval time.Duration, report func(held *HeldError, waited time.Duration)) (*Lock, error) {
	if interval <= 0 {
		interval = 25 * time.Millisecond
	}
	start := time.Now()
	var next time.Time
	for {
		l, err := TryLock(path, who)
		if err == nil || !errors.Is(err, ErrLocked) {
			return l, err
		}
		var held *HeldError
		if report != nil && errors.As(err, &held) && !time.Now().Before(next) {
			report(held, time.Since(start))
			next = time.Now().Add(ReportEvery)
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(interval):
		}
	}
}

// Probe reports who holds the lock on path, without taking it or
// writing anything: it opens the file read-only and tries a shared lock
// for an instant, so it works on a read-only or full file system. A
// file that does not exist is not held (nil, nil).
func Probe(path string) (*HeldError, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			held := readHolder(f)
			held.Path = path
			return held, nil
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return nil, nil
}

// Relabel rewrites the holder's description that a refused [TryLock]
// reports, for a holder that learns more after taking the lock (such as
// the address it listens on).
func (l *Lock) Relabel(who string) error {
	if l == nil || l.f == nil {
		return errors.New("lock: not held")
	}
	return l.record(who)
}

// Previous returns the record ("WHO (pid N, since TIME)") the file held
// when this lock was taken: the last holder's, "" for none. A holder
// that finds its own last record ([Lock.Record]) knows that no other
// process held the lock in between.
func (l *Lock) Previous() string { return l.prev }

// Record returns the record this holder leaves in the file once it has
// released the lock: the one it wrote, marked released ("WHO (pid N,
// since TIME, released)"). A holder that was killed leaves its record
// unmarked.
func (l *Lock) Record() string { return released(l.mine) }

// released marks a holder record as released.
func released(record string) string {
	return strings.TrimSuffix(record, ")\n") + releasedMark + ")\n"
}

// releasedMark ends the record of a holder that released the lock.
const releasedMark = ", released"

func (l *Lock) record(who string) error {
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("lock %s: %w", l.f.Name(), err)
	}
	line := fmt.Sprintf("%s (pid %d, since %s)\n", who, os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	if _, err := l.f.WriteAt([]byte(line), 0); err != nil {
		return fmt.Errorf("lock %s: %w", l.f.Name(), err)
	}
	l.mine = line
	return nil
}

// readRecord returns the file's holder record as written, "" for none.
func readRecord(f *os.File) string {
	buf := make([]byte, 1024)
	n, _ := f.ReadAt(buf, 0)
	return string(buf[:n])
}

// readHolder parses the line record writes: "WHO (pid N, since TIME)".
func readHolder(f *os.File) *HeldError {
	buf := make([]byte, 1024)
	n, _ := f.ReadAt(buf, 0)
	line := strings.TrimSpace(string(buf[:n]))
	i := strings.LastIndex(line, " (pid ")
	if i < 0 || !strings.HasSuffix(line, ")") {
		return &HeldError{Who: line}
	}
	pid, since, _ := strings.Cut(line[i+len(" (pid "):len(line)-1], ", since ")
	if strings.HasSuffix(since, releasedMark) {
		// The last holder's record, released: the new holder has not
		// written its own yet.
		return &HeldError{}
	}
	e := &HeldError{Who: line[:i]}
	e.PID, _ = strconv.Atoi(pid)
	e.Since, _ = time.Parse(time.RFC3339, since)
	return e
}

// Unlock marks the holder's record released (so that a file left
// behind does not name a process that no longer holds it as if it did)
// and releases the lock. The file stays, so that the next holder locks
// the same inode.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	if l.mine != "" {
		// Best effort: on a full or read-only file system the record
		// stays unmarked, as a killed holder's does.
		if l.f.Truncate(0) == nil {
			l.f.WriteAt([]byte(released(l.mine)), 0)
		}
	}
	err := l.f.Close()
	l.f = nil
	return err
}
