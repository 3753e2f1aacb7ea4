package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/api"
)

// RecordName is the daemon's record of its open window, in the API's
// folder: its deadline survives a restart.
const RecordName = "window.json"

// record is what RecordName holds.
type record struct {
	// Opened is when the window was opened through the API.
	Opened time.Time `json:"opened"`
	// Deadline is when it closes.
	Deadline time.Time `json:"deadline"`
	// SecureBoot is the window's Secure Boot setting (API open).
	SecureBoot bool `json:"secure_boot,omitempty"`
	// Discover is the window's discovery setting (API open).
	Discover bool `json:"discover,omitempty"`
}

// windows runs the daemon's windows, one at a time; it implements
// [api.Windows].
type windows struct {
	ctx      context.Context // the daemon's: windows end with it
	stateDir string
	recPath  string
	cfg      pxe.Config
	log      *slog.Logger

	mu       sync.Mutex
	cur      *running
	stopping bool // the daemon stops: records stay
}

// running is a window being served.
type running struct {
	srv     *pxe.Server
	cancel  context.CancelFunc
	done    chan struct{}
	err     error
	closing bool // closed through the API: its record goes
	rec     record
	said    *said // what it warned of as it started
}

func newWindows(ctx context.Context, stateDir string, cfg pxe.Config, apiDir string, log *slog.Logger) *windows {
	return &windows{ctx: ctx, stateDir: stateDir, recPath: filepath.Join(apiDir, RecordName), cfg: cfg, log: log}
}

func (w *windows) readRecord() (*record, error) {
	data, err := regularfile.Read(w.recPath, 64<<10)
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("window record %s: %w", w.recPath, err)
	}
	return &r, nil
}

func (w *windows) removeRecord() {
	if err := os.Remove(w.recPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		w.log.Warn("cannot remove the daemon's window record", "file", w.recPath, "err", err)
	}
}

// restore reopens the window recorded as open until its deadline.
func (w *windows) restore() {
	rec, err := w.readRecord()
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		w.log.Error("cannot read the daemon's window record; the window stays closed", "err", err)
		w.removeRecord()
		return
	}
	left := time.Until(rec.Deadline)
	if left < time.Second {
		w.log.Info("the window's deadline passed while the daemon was down; it stays closed", "deadline", rec.Deadline.Format(time.RFC3339))
		w.removeRecord()
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.startLocked(*rec); err != nil {
		w.log.Error("cannot reopen the window recorded as open", "deadline", rec.Deadline.Format(time.RFC3339), "err", err)
		w.removeRecord()
		return
	}
	w.log.Info("window reopened until its recorded deadline", "deadline", rec.Deadline.Format(time.RFC3339))
}

// Status returns the window, whoever runs it.
func (w *windows) Status(_ context.Context) (api.WindowStatus, error) {
	st, err := api.WindowStatusOf(w.stateDir, time.Now())
	if err != nil {
		return st, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	st.Daemon = w.cur != nil && st.Open && st.PID == os.Getpid()
	if st.Daemon {
		st.Warnings = w.cur.said.list()
	}
	return st, nil
}

// Open opens a window for ttl, with Secure Boot when opts asks.
func (w *windows) Open(_ context.Context, ttl time.Duration, opts api.WindowOptions) (api.WindowStatus, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopping {
		return api.WindowStatus{}, fmt.Errorf("%w: the daemon is stopping", api.ErrConflict)
	}
	if w.cur != nil {
		left := time.Until(w.cur.rec.Deadline).Round(time.Second)
		return api.WindowStatus{}, fmt.Errorf("%w (opened through the API, %s left)", pxe.ErrWindowOpen, left)
	}
	now := time.Now().UTC()
	return w.startLocked(record{Opened: now, Deadline: now.Add(ttl), SecureBoot: opts.SecureBoot, Discover: opts.Discover})
}

// startLocked starts a window until rec's deadline and waits until it
// serves or fails.
func (w *windows) startLocked(rec record) (api.WindowStatus, error) {
	cfg := w.cfg
	cfg.TTL = time.Until(rec.Deadline)
	cfg.SecureBoot = cfg.SecureBoot || rec.SecureBoot
	cfg.Discover = cfg.Discover || rec.Discover
	if cfg.TTL <= 0 {
		return api.WindowStatus{}, fmt.Errorf("%w: the window's deadline %s is not in the future; it stays closed", api.ErrBadRequest, rec.Deadline.Format(time.RFC3339Nano))
	}
	opened := make(chan *pxe.Window, 1)
	cfg.OnOpen = func(pw *pxe.Window) { opened <- pw }
	sd := &said{}
	cfg.Logger = logSaid(cfg.Logger, sd)
	srv, err := pxe.New(cfg)
	if err != nil {
		return api.WindowStatus{}, fmt.Errorf("%w: the daemon's window settings: %w", api.ErrBadRequest, err)
	}
	ctx, cancel := context.WithCancel(w.ctx)
	r := &running{srv: srv, cancel: cancel, done: make(chan struct{}), rec: rec, said: sd}
	go func() {
		r.err = srv.Serve(ctx)
		cancel()
		close(r.done)
		w.ended(r)
	}()
	var pw *pxe.Window
	select {
	case pw = <-opened:
	case <-r.done:
		var held *pxe.WindowHeldError
		if errors.As(r.err, &held) {
			return api.WindowStatus{}, r.err
		}
		err := fmt.Errorf("%w: %w", api.ErrNotStarted, r.err)
		if l := sd.list(); len(l) > 0 {
			err = fmt.Errorf("%w (it warned: %s)", err, strings.Join(l, "; "))
		}
		return api.WindowStatus{}, err
	}
	sd.stop()
	w.cur = r
	data, _ := json.Marshal(rec)
	if err := atomicfile.WriteFile(w.recPath, data, 0o600); err != nil {
		w.log.Error("cannot record the window's deadline; a restart will not reopen it", "err", err)
	}
	return api.WindowStatus{Open: true, Daemon: true, PID: pw.PID, Started: pw.Started, Deadline: pw.Deadline, HTTP: pw.HTTP, URL: pw.URL,
		DHCPInterface: pw.DHCPInterface, TFTP: pw.TFTP, CertFingerprint: pw.CertFingerprint, SecureBoot: pw.SecureBoot, Discover: pw.Discover, Warnings: sd.list()}, nil
}

// ended forgets a window that stopped serving.
func (w *windows) ended(r *running) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur == r {
		w.cur = nil
	}
	switch {
	case (w.stopping || w.ctx.Err() != nil) && !r.closing:
		// The daemon stops: the record stays, the next start reopens.
	case errors.Is(r.err, pxe.ErrWindowExpired):
		w.log.Info("window closed at its deadline")
		w.removeRecord()
	case r.closing:
		w.removeRecord()
	default:
		w.log.Error("the window failed", "err", r.err)
		w.removeRecord()
	}
}

// Close closes the open window: the daemon's, or another process's.
func (w *windows) Close(ctx context.Context) (bool, error) {
	w.mu.Lock()
	r := w.cur
	if r != nil {
		r.closing = true
		r.cancel()
	}
	w.mu.Unlock()
	if r != nil {
		select {
		case <-r.done:
		case <-ctx.Done():
			return true, ctx.Err()
		}
		return true, nil
	}
	return pxe.Disable(ctx, w.stateDir, 0)
}

// shutdown stops the daemon's window, keeping its record.
func (w *windows) shutdown() {
	w.mu.Lock()
	w.stopping = true
	r := w.cur
	w.mu.Unlock()
	if r != nil {
		r.cancel()
		<-r.done
	}
}
