package window

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/plasmactl/plasma-node/internal/regularfile"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/lockfile"
)

// FileName is the record of the open window in the state folder.
const FileName = "window.json"

// ErrOpen is the error of a window that cannot start because another is
// open on the same state.
var ErrOpen = errors.New("a provisioning window is already open")

// ErrClosed is the error of what needs an open window while none is:
// a reinstall of a machine its BMC would boot, locally or through the
// API (409).
var ErrClosed = errors.New("the provisioning window is closed")

// maxWindowFile bounds the window record read: 64 KiB.
const maxWindowFile = 64 << 10

// Record is the record a serving window keeps in the state folder, so that
// `status` and `disable` work from any shell on the host, whoever started
// the server and in whatever network namespace.
type Record struct {
	// PID is the serving process.
	PID int `json:"pid"`
	// Unit is the transient systemd unit, when systemd runs the server.
	Unit string `json:"unit,omitempty"`
	// HTTP is the HTTP listen address; DHCPInterface and TFTP the
	// network-boot side, when it runs.
	HTTP          string `json:"http"`
	DHCPInterface string `json:"dhcp_interface,omitempty"`
	TFTP          string `json:"tftp,omitempty"`
	// URL is where installers reach the answer endpoint.
	URL string `json:"url,omitempty"`
	// Started and Deadline bound the window; a zero Deadline means no TTL.
	Started  time.Time `json:"started"`
	Deadline time.Time `json:"deadline,omitzero"`
	// CertFingerprint is the SHA-256 fingerprint of the window's TLS
	// certificate, for installers to pin; empty without TLS.
	CertFingerprint string `json:"cert_fingerprint,omitempty"`
	// SecureBoot says the window offers every UEFI x86-64 machine the
	// Secure Boot chain instead of iPXE.
	SecureBoot bool `json:"secure_boot,omitempty"`
	// Discover says the window boots unregistered machines into
	// discovery, keeping their reports in the inbox.
	Discover bool `json:"discover,omitempty"`
	// MediaInstaller is the Proxmox VE version ("9.2") of the release
	// the window makes virtual media of; empty when it makes none.
	MediaInstaller string `json:"media_installer,omitempty"`
}

// Open reports whether the window is still open at now: its process is
// alive and its deadline has not passed.
func (w *Record) Open(now time.Time) bool {
	if w == nil || w.PID <= 0 {
		return false
	}
	if !w.Deadline.IsZero() && !now.Before(w.Deadline) {
		return false
	}
	return processAlive(w.PID)
}

// Left returns the time left at now, 0 when the window is closed.
func (w *Record) Left(now time.Time) time.Duration {
	if !w.Open(now) || w.Deadline.IsZero() {
		return 0
	}
	return w.Deadline.Sub(now).Round(time.Second)
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Write records w in stateDir atomically.
func Write(stateDir string, w *Record) error {
	data, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(stateDir, FileName), append(data, '\n'), 0o644)
}

// Read reads the window record of stateDir. No record is an error
// wrapping [fs.ErrNotExist].
func Read(stateDir string) (*Record, error) {
	data, err := regularfile.Read(filepath.Join(stateDir, FileName), maxWindowFile)
	if err != nil {
		return nil, fmt.Errorf("window record: %w", err)
	}
	var w Record
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("window record %s: %w", filepath.Join(stateDir, FileName), err)
	}
	return &w, nil
}

// Remove removes the record if it is still the one of process pid
// (a newer window's record is left alone).
func Remove(stateDir string, pid int) error {
	w, err := Read(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && w.PID != pid {
		return nil
	}
	if err := os.Remove(filepath.Join(stateDir, FileName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// LockName is the lock file in the state folder that a serving
// window holds for its whole life, so that one state folder has one
// window at a time.
const LockName = "window.lock"

// HolderPrefix starts the holder's description in the lock file; the
// HTTP address follows.
const HolderPrefix = "provisioning window on "

// HeldError is the error of a window (pxe.Server.Serve, pxe.Enable) when
// another window holds the state folder. It matches [ErrOpen].
type HeldError struct {
	// StateDir is the state folder held.
	StateDir string
	// PID is the process serving the other window.
	PID int
	// HTTP is the other window's HTTP address: the bound one once it
	// listens, the configured one before.
	HTTP string
	// Since is when the other window took the state folder.
	Since time.Time
}

// Error names the state folder, the holder's process and its address.
func (e *HeldError) Error() string {
	return fmt.Sprintf("state folder %s already has a provisioning window: pid %d serving on %s since %s",
		e.StateDir, e.PID, e.HTTP, e.Since.Format(time.RFC3339))
}

// Is makes a HeldError match [ErrOpen].
func (e *HeldError) Is(target error) bool { return target == ErrOpen }

// Lock takes the state folder for a window that will serve on addr, or
// returns a [*HeldError] naming the window holding it. The lock is held
// until its Unlock; Relabel it with [HolderPrefix] and the bound address
// once the window listens.
func Lock(stateDir, addr string) (*lockfile.Lock, error) {
	l, err := lockfile.TryLock(filepath.Join(stateDir, LockName), HolderPrefix+addr)
	var held *lockfile.HeldError
	if errors.As(err, &held) {
		return nil, heldError(stateDir, held)
	}
	return l, err
}

func heldError(stateDir string, held *lockfile.HeldError) *HeldError {
	addr, _ := strings.CutPrefix(held.Who, HolderPrefix)
	return &HeldError{StateDir: stateDir, PID: held.PID, HTTP: addr, Since: held.Since}
}

// Holder returns the window holding stateDir, or nil when none
// does (no lock file, or nobody holds it). It only reads: it works on a
// read-only or full state folder ([lockfile.Probe]).
func Holder(stateDir string) (*HeldError, error) {
	if _, err := os.Lstat(filepath.Join(stateDir, LockName)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	held, err := lockfile.Probe(filepath.Join(stateDir, LockName))
	switch {
	case err != nil:
		return nil, fmt.Errorf("window lock: %w", err)
	case held != nil:
		return heldError(stateDir, held), nil
	}
	return nil, nil
}
