package pxe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// unitName is the transient systemd unit a window runs as under systemd.
const unitName = "node-provisioner-window"

// unitEnv is the environment variable that names the systemd unit a
// window runs as; [Enable] sets it and the window records it.
const unitEnv = "NODE_PROVISIONER_UNIT"

// EnableOptions say how to start a window's server.
type EnableOptions struct {
	// Command is the argv of the serving process (for example
	// node-provisioner --state-dir … serve --ttl 2h). Required.
	Command []string
	// StateDir is where the server writes its window record. Required.
	StateDir string
	// Env are NAME=value pairs the server gets in its environment, never
	// as arguments (a secret): systemd-run is given their names only and
	// copies the values from its own environment.
	Env []string
	// TTL is the window's length; under systemd it also becomes the unit's
	// RuntimeMaxSec (plus a minute), a second guard.
	TTL time.Duration
	// Logger receives what Enable does; nil discards it.
	Logger *slog.Logger
}

// Enable starts the window's server in the background — a transient
// systemd unit when systemd runs the machine, else a detached process
// whose pid is written to <StateDir>/serve.pid and whose output goes to
// <StateDir>/serve.log — and waits until the server has recorded its
// window. An open window is an error wrapping [window.ErrOpen], with the
// window's record, or a [*window.HeldError] and no record when a window
// holds the state folder without having recorded itself.
func Enable(ctx context.Context, o EnableOptions) (*window.Record, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(o.Command) == 0 || o.StateDir == "" {
		return nil, errors.New("enable: Command and StateDir are required")
	}
	if w, err := window.Read(o.StateDir); err == nil && w.Open(time.Now()) {
		return w, fmt.Errorf("%w (pid %d, %s left)", window.ErrOpen, w.PID, w.Left(time.Now()))
	}
	if held, err := window.Holder(o.StateDir); err == nil && held != nil {
		return nil, held
	}
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("enable: %w", err)
	}
	var pid int
	_, sysErr := os.Stat("/run/systemd/system") // systemd runs the machine
	if _, runErr := exec.LookPath("systemd-run"); sysErr == nil && runErr == nil {
		args := []string{"--unit", unitName, "--collect", "--quiet",
			"--property", "RuntimeMaxSec=" + strconv.Itoa(int((o.TTL + time.Minute).Seconds())),
			"--setenv", unitEnv + "=" + unitName}
		for _, kv := range o.Env {
			name, _, _ := strings.Cut(kv, "=")
			args = append(args, "--setenv", name) // systemd-run copies its value
		}
		run := exec.CommandContext(ctx, "systemd-run", append(args, o.Command...)...)
		run.Env = append(os.Environ(), o.Env...)
		if out, err := run.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("enable: systemd-run: %w: %s", err, strings.TrimSpace(string(out)))
		}
		log.Info("window started as a transient unit", "unit", unitName)
	} else {
		logf, err := os.OpenFile(filepath.Join(o.StateDir, "serve.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("enable: %w", err)
		}
		defer logf.Close()
		cmd := exec.Command(o.Command[0], o.Command[1:]...)
		cmd.Stdout, cmd.Stderr, cmd.Env = logf, logf, append(os.Environ(), o.Env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("enable: start %s: %w", o.Command[0], err)
		}
		pid = cmd.Process.Pid
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if err := atomicfile.WriteFile(filepath.Join(o.StateDir, "serve.pid"), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
			cmd.Process.Kill()
			return nil, err
		}
		log.Info("window started as a detached process", "pid", pid, "log", filepath.Join(o.StateDir, "serve.log"))
		w, err := waitWindow(ctx, o.StateDir, pid, done)
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	return waitWindow(ctx, o.StateDir, 0, nil)
}

// waitWindow waits 15 seconds for the record of an open window (of pid,
// when pid is set), failing early if the process exits.
func waitWindow(ctx context.Context, stateDir string, pid int, exited <-chan error) (*window.Record, error) {
	const wait = 15 * time.Second
	deadline := time.After(wait)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if w, err := window.Read(stateDir); err == nil && (pid == 0 || w.PID == pid) && w.Open(time.Now()) {
			return w, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("enable: the server exited before opening the window (%w); see %s", err, filepath.Join(stateDir, "serve.log"))
		case <-deadline:
			return nil, fmt.Errorf("enable: the server did not open the window within %s; see %s", wait, filepath.Join(stateDir, "serve.log"))
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// Disable closes the open window: the one holding the state folder's
// lock ([window.LockName]), else the one its record names. It stops the
// transient unit, or sends the serving process SIGTERM and waits (SIGKILL
// after timeout, default 10 s). It is idempotent: with no open window it removes a stale record
// and returns (false, nil).
func Disable(ctx context.Context, stateDir string, timeout time.Duration) (bool, error) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	w, err := window.Read(stateDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	held, herr := window.Holder(stateDir)
	if herr != nil {
		return false, herr
	}
	if held != nil && (w == nil || w.PID != held.PID) {
		// The window holding the folder has no record (it is starting,
		// or could not write it): stop it all the same.
		w = &window.Record{PID: held.PID, HTTP: held.HTTP, Started: held.Since}
	}
	if w == nil {
		return false, nil
	}
	if !w.Open(time.Now()) {
		return false, window.Remove(stateDir, w.PID)
	}
	if w.Unit != "" {
		if out, err := exec.CommandContext(ctx, "systemctl", "stop", w.Unit).CombinedOutput(); err != nil {
			return false, fmt.Errorf("disable: systemctl stop %s: %w: %s", w.Unit, err, strings.TrimSpace(string(out)))
		}
	} else if err := syscall.Kill(w.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, fmt.Errorf("disable: signal pid %d: %w", w.PID, err)
	}
	end := time.Now().Add(timeout)
	for processAlive(w.PID) && !isZombie(w.PID) {
		if time.Now().After(end) {
			syscall.Kill(w.PID, syscall.SIGKILL)
			break
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true, window.Remove(stateDir, w.PID)
}

// isZombie reports whether pid has exited but is not yet reaped (our own
// child, when the caller started it).
func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

// runHook runs an operator's DHCP hook command (sh -c) with the window's
// network-boot facts in its environment: PXE_ACTION (enable or disable),
// PXE_NEXT_SERVER, PXE_BOOT_FILE and PXE_SCRIPT_URL. It is the way to
// sites whose switches drop proxy offers.
func runHook(ctx context.Context, hook, action, nextServer, bootFile, scriptURL string) error {
	if hook == "" {
		return nil
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", hook)
	cmd.Env = append(os.Environ(), "PXE_ACTION="+action, "PXE_NEXT_SERVER="+nextServer, "PXE_BOOT_FILE="+bootFile, "PXE_SCRIPT_URL="+scriptURL)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("dhcp hook (%s): %w: %s", action, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
