// Package regularfile reads the files the project is given (node and
// platform YAML, registrations, site settings, keys, manifests, event
// logs) so that no file can hang or exhaust it: it opens without
// blocking (a FIFO does not wait for a writer), accepts regular files
// only (not a FIFO, a device such as /dev/zero, a socket or a folder),
// and reads through a size limit.
//
// It reads, and checks a file a writer is about to replace
// ([CheckReplaceable]); it does not lock, write or follow anything but
// the path's own symbolic links.
package regularfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by the errors of [Open] and [Read] for a path
// that names something other than a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the errors of [Read] for a file over its
// limit.
var ErrTooLarge = errors.New("file too large")

// Open opens path for reading without blocking on a FIFO, and refuses
// anything but a regular file with an error wrapping [ErrNotRegular]. The
// returned file reads in blocking mode as usual.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(fi.Mode()))}
	}
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return f, nil
}

// Read returns the content of the regular file path, or an error
// wrapping [ErrTooLarge] when it holds more than limit bytes (read: a
// file that grows while read is cut at the limit, not read on).
func Read(path string, limit int64) ([]byte, error) {
	// The system calls of cat (open, fstat, read to the end, close):
	// an *os.File costs a poller registration, two fcntl calls and a
	// finalizer more, which a list of 10 000 node files feels.
	fd, err := ignoringEINTR(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if mode := fileMode(uint32(st.Mode)); !mode.IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(mode))}
	}
	// O_NONBLOCK (which keeps the open of a FIFO from blocking) does not
	// change reads of a regular file.
	data := make([]byte, 0, min(max(st.Size, 0), limit)+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := ignoringEINTR(func() (int, error) { return syscall.Read(fd, data[len(data):min(cap(data), int(limit)+1)]) })
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			break
		}
		data = data[:len(data)+n]
		if int64(len(data)) > limit {
			return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: over %d bytes", ErrTooLarge, limit)}
		}
	}
	return data, nil
}

// CheckReplaceable reports whether path, a file a writer is about to
// replace (by renaming a new file over it) or remove, is a regular file
// itself: not a symbolic link, whose target the rename would leave as it
// was while the link silently became a regular file, nor a FIFO, a
// device, a socket or a folder. The error wraps [ErrNotRegular] and says
// what path is; a missing path is nil (there is nothing to replace).
func CheckReplaceable(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().IsRegular() {
		return nil
	}
	what := kind(fi.Mode())
	if fi.Mode()&fs.ModeSymlink != 0 {
		what = "a symbolic link"
		if target, err := os.Readlink(path); err == nil {
			what += " to " + target
		}
	}
	return &fs.PathError{Op: "replace", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, what)}
}

// ignoringEINTR retries f while it is interrupted.
func ignoringEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// fileMode is the type bits of a stat mode as an fs.FileMode.
func fileMode(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	default:
		return "mode " + m.String()
	}
}
