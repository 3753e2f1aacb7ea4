package folder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// maxEventLine is the longest event line sent; longer lines are skipped.
const maxEventLine = 64 << 10

// position is where in the event log a stream is: the file (by inode,
// and a checksum of its first line, since a removed file's inode is soon
// used again) and the offset after the last event sent. It is the
// event's id.
type position struct {
	ino uint64
	gen uint32
	off int64
}

func (p position) String() string {
	return strconv.FormatUint(p.ino, 10) + "-" + strconv.FormatUint(uint64(p.gen), 16) + "-" + strconv.FormatInt(p.off, 10)
}

func parsePosition(s string) (position, bool) {
	parts := strings.Split(s, "-")
	if len(parts) != 3 {
		return position{}, false
	}
	ino, err1 := strconv.ParseUint(parts[0], 10, 64)
	gen, err2 := strconv.ParseUint(parts[1], 16, 32)
	off, err3 := strconv.ParseInt(parts[2], 10, 64)
	return position{ino, uint32(gen), off}, err1 == nil && err2 == nil && err3 == nil && off >= 0
}

// firstLineSum is the checksum of the file's first line (at most 256
// bytes of it): with the inode, it tells the file apart from a later one
// on the same inode.
func firstLineSum(f *os.File) uint32 {
	buf := make([]byte, 256)
	n, _ := f.ReadAt(buf, 0)
	buf = buf[:n]
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i]
	}
	return crc32.ChecksumIEEE(buf)
}

func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// tail follows the event log: the rotated part first when a stream
// starts in it, then the current file, across rotations.
type tail struct {
	path    string // the current log
	f       *os.File
	ino     uint64
	off     int64
	rotated bool   // f is the rotated part (<path>.1)
	gen     uint32 // firstLineSum of f, 0 until known
	pending []byte
	skip    bool // dropping an over-long line up to its end
	// kinds, when not nil, are the kinds read: a line of another kind is
	// passed over undecoded.
	kinds []events.Kind
	// before is the inode of the rotated part when the tail started
	// with no file to read (0: there was none): a rotated part found
	// later that is another file holds events the tail has not read.
	before uint64
}

// openTail starts the tail after lastID: "" from the oldest event kept,
// [events.FromNow] after the newest, else after the event of that id (from the
// oldest kept when its file is gone).
func openTail(path, lastID string) (*tail, error) {
	t := &tail{path: path}
	switch lastID {
	case "":
		return t, t.startOldest()
	case events.FromNow:
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			if old, err := os.Stat(path + ".1"); err == nil {
				t.before = inode(old) // mid-rotation: its events are not new
			}
			return t, nil
		}
		if err != nil {
			return nil, err
		}
		return t, t.openAt(path, false, inode(fi), fi.Size())
	}
	p, ok := parsePosition(lastID)
	if !ok {
		return nil, fmt.Errorf("%w: %q", events.ErrBadID, lastID)
	}
	for _, c := range []struct {
		path    string
		rotated bool
	}{{path + ".1", true}, {path, false}} {
		fi, err := os.Stat(c.path)
		if err != nil || inode(fi) != p.ino {
			continue
		}
		if err := t.openAt(c.path, c.rotated, p.ino, min(p.off, fi.Size())); err != nil {
			return nil, err
		}
		if t.gen = firstLineSum(t.f); t.gen == p.gen {
			return t, nil
		}
		t.close() // another file on a reused inode
		t.f = nil
	}
	return t, t.startOldest()
}

func (t *tail) startOldest() error {
	if fi, err := os.Stat(t.path + ".1"); err == nil {
		return t.openAt(t.path+".1", true, inode(fi), 0)
	}
	return nil // the current file is opened when it exists
}

func (t *tail) openAt(path string, rotated bool, ino uint64, off int64) error {
	f, err := regularfile.Open(path)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil || inode(fi) != ino {
		f.Close()
		if err == nil {
			err = fmt.Errorf("event log %s changed while opened", path)
		}
		return err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	if t.f != nil {
		t.f.Close()
	}
	t.f, t.ino, t.gen, t.off, t.rotated, t.pending, t.skip = f, ino, 0, off, rotated, nil, false
	return nil
}

func (t *tail) close() {
	if t.f != nil {
		t.f.Close()
	}
}

// next returns the events written since the last call, with the id of
// each; none when there are none yet.
func (t *tail) next() ([]events.Record, error) {
	if t.f == nil {
		// Nothing read yet. If the log was started and rotated since,
		// its first events are in the rotated part.
		if old, err := os.Stat(t.path + ".1"); err == nil && inode(old) != t.before {
			if err := t.openAt(t.path+".1", true, inode(old), 0); err != nil {
				return nil, err
			}
			return t.read()
		}
		fi, err := os.Stat(t.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if err := t.openAt(t.path, false, inode(fi), 0); err != nil {
			return nil, err
		}
	}
	recs, err := t.read()
	if err != nil || len(recs) > 0 {
		return recs, err
	}
	// At the end of the file: move on if it was rotated away.
	if t.rotated {
		return t.moveOn()
	}
	fi, err := os.Stat(t.path)
	if err == nil && inode(fi) != t.ino {
		recs, err := t.read() // what was written before the rotation
		if err != nil || len(recs) > 0 {
			return recs, err
		}
		// The file was rotated away. When the rotated part is another
		// file, the log rotated twice: that one comes next.
		if old, err := os.Stat(t.path + ".1"); err == nil && inode(old) != t.ino {
			if err := t.openAt(t.path+".1", true, inode(old), 0); err != nil {
				return nil, err
			}
			return t.read()
		}
		return t.moveOn()
	}
	return nil, nil
}

// moveOn opens the current file and reads what it holds.
func (t *tail) moveOn() ([]events.Record, error) {
	if err := t.openCurrent(); err != nil || t.f == nil {
		return nil, err
	}
	return t.read()
}

func (t *tail) openCurrent() error {
	fi, err := os.Stat(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		// Mid-rotation: the file read is done; a rotated part that is
		// another file is next.
		t.close()
		t.f, t.before = nil, t.ino
		return nil
	}
	if err != nil {
		return err
	}
	return t.openAt(t.path, false, inode(fi), 0)
}

// read reads what the file holds past the offset, returning the
// complete lines' events.
func (t *tail) read() ([]events.Record, error) {
	var recs []events.Record
	buf := make([]byte, 32<<10)
	for range 64 { // at most 2 MiB a call
		n, err := t.f.Read(buf)
		chunk := buf[:n]
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				if !t.skip {
					t.pending = append(t.pending, chunk...)
					if len(t.pending) > maxEventLine {
						t.pending, t.skip = nil, true
					}
				}
				t.off += int64(len(chunk))
				break
			}
			line := chunk[:i]
			t.off += int64(i + 1)
			chunk = chunk[i+1:]
			if t.skip {
				t.skip = false
				continue
			}
			full := append(t.pending, line...)
			t.pending = nil
			if t.kinds != nil && !mayBeOf(full, t.kinds) {
				continue
			}
			var e events.Event
			if len(bytes.TrimSpace(full)) == 0 || json.Unmarshal(full, &e) != nil {
				continue // a torn line of a killed writer
			}
			if t.kinds != nil && !slices.Contains(t.kinds, e.Kind) {
				continue
			}
			if t.gen == 0 {
				t.gen = firstLineSum(t.f)
			}
			recs = append(recs, events.Record{ID: position{t.ino, t.gen, t.off}.String(), Event: e})
		}
		if err == io.EOF || n == 0 {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
	}
	return recs, nil
}
