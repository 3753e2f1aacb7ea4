package lockfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrLocked is returned by [TryLock], and by [Acquire] when its context ends
// first, while another holder has the lock. The error's text names the
// holder.
var ErrLocked = errors.New("locked")

// Lock is a held lock. Release it with [Lock.Unlock].
type Lock struct {
	f *os.File
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
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readHolder(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is %w by %s", path, ErrLocked, holder)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	l := &Lock{f: f}
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
	if interval <= 0 {
		interval = 25 * time.Millisecond
	}
	for {
		l, err := TryLock(path, who)
		if err == nil || !errors.Is(err, ErrLocked) {
			return l, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(interval):
		}
	}
}

func (l *Lock) record(who string) error {
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("lock %s: %w", l.f.Name(), err)
	}
	line := fmt.Sprintf("%s (pid %d, since %s)\n", who, os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	if _, err := l.f.WriteAt([]byte(line), 0); err != nil {
		return fmt.Errorf("lock %s: %w", l.f.Name(), err)
	}
	return nil
}

func readHolder(f *os.File) string {
	buf := make([]byte, 256)
	n, _ := f.ReadAt(buf, 0)
	s := strings.TrimSpace(string(buf[:n]))
	if s == "" {
		return "another process"
	}
	return s
}

// Unlock releases the lock. The file stays, so that the next holder locks
// the same inode.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
