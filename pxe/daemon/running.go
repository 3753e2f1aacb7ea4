package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/lockfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

// RunningName is the record a running daemon keeps of itself in the
// API's folder (<state-dir>/api), so that commands on the same state
// folder go through its API instead of serving a window beside it.
const RunningName = "daemon.json"

// maxRunningFile bounds the daemon record read: 64 KiB.
const maxRunningFile = 64 << 10

// RunningLockName is the lock file in the API's folder that a daemon
// holds for its whole life: one daemon per state folder, and a record
// whose pid was reused by another process is told from a live daemon.
const RunningLockName = "daemon.lock"

// runningHolder starts the holder's description in the lock file; the
// API's address follows once it listens.
const runningHolder = "node-provisioner daemon, API on "

// lockWait is how long a starting daemon waits for the lock, which a
// [Running] probe holds for a moment.
const lockWait = 2 * time.Second

// ErrRunning is returned (wrapped) by [Daemon.Run] when another daemon
// runs on the state folder.
var ErrRunning = errors.New("a daemon already runs on this state folder")

// ErrNoCertificate is returned (wrapped) by [LocalClient] when the state
// folder holds no API certificate to pin.
var ErrNoCertificate = errors.New("the state folder has no API certificate")

// Record is what [RunningName] holds: the daemon's process and where its
// API listens.
type Record struct {
	// PID is the daemon's process.
	PID int `json:"pid"`
	// Addr is the API's address as it listens, such as "[::]:8091" or
	// "127.0.0.1:8091".
	Addr string `json:"addr"`
	// Started is when the API started listening.
	Started time.Time `json:"started"`
	// Fingerprint is the SHA-256 fingerprint of the certificate the API
	// serves (the state folder's or the site's); empty in the records of
	// older daemons.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// URL returns the HTTPS address a client on the daemon's host dials: an
// unspecified listen host (":8091", "0.0.0.0:8091", "[::]:8091") is
// dialled on 127.0.0.1.
func (r Record) URL() string {
	host, port, err := net.SplitHostPort(r.Addr)
	if err != nil {
		return "https://" + r.Addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "https://" + net.JoinHostPort(host, port)
}

// runningPath is the record's file in stateDir.
func runningPath(stateDir string) string {
	return filepath.Join(stateDir, apitoken.DirName, RunningName)
}

// writeRunning records r in stateDir atomically, 0600.
func writeRunning(stateDir string, r Record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(runningPath(stateDir), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("daemon record: %w", err)
	}
	return nil
}

// removeRunning removes the record if it is still the one of process
// pid (a newer daemon's record is left alone).
func removeRunning(stateDir string, pid int) error {
	r, err := readRunning(stateDir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && r.PID != pid) {
		return nil
	}
	if err := os.Remove(runningPath(stateDir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("daemon record: %w", err)
	}
	return nil
}

func readRunning(stateDir string) (Record, error) {
	var r Record
	data, err := regularfile.Read(runningPath(stateDir), maxRunningFile)
	if err != nil {
		return r, fmt.Errorf("daemon record: %w", err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("daemon record %s: %w", runningPath(stateDir), err)
	}
	return r, nil
}

// Running returns the record of the daemon running on stateDir, and
// whether one runs: a record whose process is gone (a killed daemon) is
// not one. An unreadable record is an error.
func Running(stateDir string) (Record, bool, error) {
	r, err := readRunning(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	if r.PID <= 0 || r.Addr == "" {
		return Record{}, false, fmt.Errorf("daemon record %s: no pid or address", runningPath(stateDir))
	}
	if !processAlive(r.PID) {
		return r, false, nil
	}
	// The pid lives: it is the daemon if the daemon's lock is held (a
	// killed daemon's pid may have been reused). A lock this process
	// cannot open (another user's folder) leaves the pid's word.
	l, err := lockfile.TryLock(filepath.Join(stateDir, apitoken.DirName, RunningLockName), "node-provisioner (looking for a daemon)")
	if err != nil {
		return r, true, nil // held (lockfile.ErrLocked), or not ours to open
	}
	return r, false, l.Unlock()
}

// lockRunning takes the state folder's daemon lock, waiting a moment for
// a [Running] probe; another daemon holding it is an error wrapping
// [ErrRunning] that names it.
func lockRunning(ctx context.Context, stateDir string) (*lockfile.Lock, error) {
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	// A PostgreSQL store keeps the tokens elsewhere: nothing made the
	// API's folder yet.
	if err := os.MkdirAll(filepath.Join(stateDir, apitoken.DirName), 0o700); err != nil {
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	l, err := lockfile.Acquire(ctx, filepath.Join(stateDir, apitoken.DirName, RunningLockName), runningHolder+"(starting)", 10*time.Millisecond)
	var held *lockfile.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("%w: pid %d (%s) since %s", ErrRunning, held.PID, held.Who, held.Since.Format(time.RFC3339))
	}
	if err != nil {
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	return l, nil
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// LocalClient returns a client of the daemon r running on stateDir, on
// the same host: it dials r's address (see [Record.URL]) and pins the
// certificate the record names, else the state folder's own
// (<state-dir>/tls, read, never made).
// token is the API token to send.
func LocalClient(stateDir string, r Record, token string, log *slog.Logger) (*client.Client, error) {
	fp, err := r.Fingerprint, error(nil)
	if fp == "" {
		fp, err = tlscert.ReadFingerprint(stateDir)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (%s)", ErrNoCertificate, err)
	}
	if err != nil {
		return nil, err
	}
	return client.New(client.Options{URL: r.URL(), Token: token, Fingerprint: fp, Logger: log})
}
