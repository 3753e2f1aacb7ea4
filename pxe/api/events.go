package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/plasmactl/plasma-node/answer/registry"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/backend"
)

// heartbeat is how often an idle event stream sends a comment, so that
// proxies keep it and a gone client is noticed.
const heartbeat = 15 * time.Second

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
}

// open starts the tail after lastID: "" from the oldest event kept,
// [FromNow] after the newest, else after the event of that id (from the
// oldest kept when its file is gone).
func openTail(path, lastID string) (*tail, error) {
	t := &tail{path: path}
	switch lastID {
	case "":
		return t, t.startOldest()
	case FromNow:
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return t, nil
		}
		if err != nil {
			return nil, err
		}
		return t, t.openAt(path, false, inode(fi), fi.Size())
	}
	p, ok := parsePosition(lastID)
	if !ok {
		return nil, fmt.Errorf("%w: Last-Event-ID %q is not an id this server sent", ErrBadRequest, lastID)
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
func (t *tail) next() ([]string, []backend.Event, error) {
	if t.f == nil {
		fi, err := os.Stat(t.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if err := t.openAt(t.path, false, inode(fi), 0); err != nil {
			return nil, nil, err
		}
	}
	ids, evs, err := t.read()
	if err != nil || len(evs) > 0 {
		return ids, evs, err
	}
	// At the end of the file: move on if it was rotated away.
	if t.rotated {
		return nil, nil, t.openCurrent()
	}
	fi, err := os.Stat(t.path)
	if err == nil && inode(fi) != t.ino {
		ids, evs, err := t.read() // what was written before the rotation
		if err != nil || len(evs) > 0 {
			return ids, evs, err
		}
		return nil, nil, t.openCurrent()
	}
	return nil, nil, nil
}

func (t *tail) openCurrent() error {
	fi, err := os.Stat(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		t.close()
		t.f = nil
		return nil
	}
	if err != nil {
		return err
	}
	return t.openAt(t.path, false, inode(fi), 0)
}

// read reads what the file holds past the offset, returning the
// complete lines' events.
func (t *tail) read() ([]string, []backend.Event, error) {
	var ids []string
	var evs []backend.Event
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
			var e backend.Event
			if len(bytes.TrimSpace(full)) == 0 || json.Unmarshal(full, &e) != nil {
				continue // a torn line of a killed writer
			}
			if t.gen == 0 {
				t.gen = firstLineSum(t.f)
			}
			ids = append(ids, position{t.ino, t.gen, t.off}.String())
			evs = append(evs, e)
		}
		if err == io.EOF || n == 0 {
			return ids, evs, nil
		}
		if err != nil {
			return ids, evs, err
		}
	}
	return ids, evs, nil
}

// tokenRecheck is how often an event stream checks that its token still
// holds.
const tokenRecheck = time.Second

// takeStream counts an event stream of the token name, unless it holds
// MaxStreamsPerToken already.
func (h *Handler) takeStream(name string) bool {
	h.streamsMu.Lock()
	defer h.streamsMu.Unlock()
	if h.perToken == nil {
		h.perToken = map[string]int{}
	}
	if h.perToken[name] >= h.cfg.MaxStreamsPerToken {
		return false
	}
	h.perToken[name]++
	return true
}

// dropStream uncounts an event stream of the token name.
func (h *Handler) dropStream(name string) {
	h.streamsMu.Lock()
	defer h.streamsMu.Unlock()
	if h.perToken[name]--; h.perToken[name] <= 0 {
		delete(h.perToken, name)
	}
}

func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	if n := h.streams.Add(1); n > int64(h.cfg.MaxStreams) {
		h.streams.Add(-1)
		h.log.Warn("api: event stream refused: too many open", "client_ip", clientIP(r), "max", h.cfg.MaxStreams)
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("%d event streams are open already; try again later", h.cfg.MaxStreams), "")
		return
	}
	defer h.streams.Add(-1)
	tok := tokenOf(r)
	if !h.takeStream(tok.Name) {
		h.log.Warn("api: event stream refused: the token holds its share open", "client_ip", clientIP(r), "token", tok.Name, "max", h.cfg.MaxStreamsPerToken)
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("token %q holds %d event streams open already, its most; close one", tok.Name, h.cfg.MaxStreamsPerToken), "")
		return
	}
	defer h.dropStream(tok.Name)
	last := r.Header.Get("Last-Event-ID")
	if q := r.URL.Query().Get("last_event_id"); last == "" && q != "" {
		last = q
	}
	t, err := openTail(filepath.Join(h.cfg.StateDir, registry.EventsFileName), last)
	if errors.Is(err, ErrBadRequest) {
		writeError(w, http.StatusBadRequest, err.Error(), "Last-Event-ID")
		return
	}
	if err != nil {
		h.internal(w, "open the event log", err)
		return
	}
	defer t.close()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": node-provisioner events\n\n")
	if err := rc.Flush(); err != nil {
		return
	}
	ctx := r.Context()
	tick := time.NewTicker(h.cfg.EventPoll)
	defer tick.Stop()
	idle, checked := time.Now(), time.Now()
	for {
		if time.Since(checked) >= tokenRecheck {
			// A stream lasts: it ends once its token is revoked (or no
			// longer reads), as a new request would be refused.
			checked = time.Now()
			if now, err := h.cfg.Tokens.Recheck(ctx, tok); err != nil || !now.Scope.Allows(apitoken.ScopeRead) {
				h.log.Warn("api: event stream ended: its token was revoked", "client_ip", clientIP(r), "token", tok.Name)
				fmt.Fprint(w, ": token revoked\n\n")
				rc.Flush()
				return
			}
		}
		ids, evs, err := t.next()
		if err != nil {
			h.log.Warn("api: event stream: cannot read the event log", "err", err)
			return
		}
		for i, e := range evs {
			data, _ := json.Marshal(e)
			fmt.Fprintf(w, "id: %s\ndata: %s\n\n", ids[i], data)
		}
		switch {
		case len(evs) > 0:
			idle = time.Now()
		case time.Since(idle) >= heartbeat:
			fmt.Fprint(w, ": ping\n\n")
			idle = time.Now()
		default:
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			continue
		}
		rc.SetWriteDeadline(time.Now().Add(heartbeat))
		if err := rc.Flush(); err != nil {
			return
		}
		if err := ctx.Err(); err != nil {
			return
		}
	}
}

// Follow calls fn with each event of stateDir's event log after lastID
// (as the event stream takes it: "", [FromNow] or an event's id), looking
// for new ones every poll, until ctx ends (it returns ctx's error) or fn
// returns an error (returned). It is the event stream without HTTP, for
// a program on the state folder's machine.
func Follow(ctx context.Context, stateDir, lastID string, poll time.Duration, fn func(id string, e backend.Event) error) error {
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	t, err := openTail(filepath.Join(stateDir, registry.EventsFileName), lastID)
	if err != nil {
		return err
	}
	defer t.close()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		ids, evs, err := t.next()
		if err != nil {
			return err
		}
		for i, e := range evs {
			if err := fn(ids[i], e); err != nil {
				return err
			}
		}
		if len(evs) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
