package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// serveLogName is the log, in the state folder, of a window that
// pxe.Enable started as a detached process.
const serveLogName = "serve.log"

// maxLogSaid bounds what [Enable] reads of the window's log: 1 MiB.
const maxLogSaid = 1 << 20

// Background is node-provisioner's serve on a state folder, which
// [Enable] runs on this host in the background. Folders and key files
// are made absolute (the window may run in another folder); Store, which
// may hold a password, reaches the window in its environment
// (registrar.EnvStore), never as an argument.
type Background struct {
	// Executable is node-provisioner's program.
	Executable string
	// StateDir, SecretsDir, Store and KeyFile are its global flags.
	StateDir, SecretsDir, Store, KeyFile string
	// ServeArgs are serve's flags, key files absolute.
	ServeArgs []string
	// TTL is the window's length.
	TTL time.Duration
	// Logger receives what Enable does; nil discards it.
	Logger *slog.Logger
}

// Enable starts the window b (pxe.Enable) and returns it with what it
// said as it started, from its log as [readSaid] reads it with voice
// (such as "node-provisioner: "): its warnings, or why it could not
// start (a port taken). An open window wraps window.ErrOpen.
func Enable(ctx context.Context, b Background, voice string) (*window.Record, []string, error) {
	for _, p := range []*string{&b.StateDir, &b.SecretsDir, &b.KeyFile} {
		if a, err := filepath.Abs(*p); err == nil && *p != "" {
			*p = a
		}
	}
	argv := []string{b.Executable, "--state-dir", b.StateDir, "--secrets-dir", b.SecretsDir, "--log-format", "json"}
	var env []string
	if b.Store != "" {
		env = append(env, registrar.EnvStore+"="+b.Store)
		if b.KeyFile != "" {
			argv = append(argv, "--store-key", b.KeyFile)
		}
	}
	o := pxe.EnableOptions{Command: append(append(argv, "serve"), b.ServeArgs...), StateDir: b.StateDir, Env: env, TTL: b.TTL, Logger: b.Logger}
	path := filepath.Join(o.StateDir, serveLogName)
	var from int64
	if fi, err := os.Stat(path); err == nil {
		from = fi.Size()
	}
	w, err := pxe.Enable(ctx, o)
	f, ferr := os.Open(path)
	if ferr != nil {
		return w, nil, err
	}
	defer f.Close()
	if _, ferr := f.Seek(from, io.SeekStart); ferr != nil {
		return w, nil, err
	}
	return w, readSaid(io.LimitReader(f, maxLogSaid), voice), err
}

// readSaid reads a window's log: each warning and error of its JSON
// lines as "warning: msg (key=value, ...)" or "error: ...", keys in
// order, and its other lines that start with voice, without it.
func readSaid(r io.Reader, voice string) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			if msg, ok := strings.CutPrefix(line, voice); ok {
				out = append(out, msg)
			}
			continue
		}
		level, _ := rec["level"].(string)
		if level != "WARN" && level != "ERROR" {
			continue
		}
		msg, _ := rec["msg"].(string)
		var parts []string
		keys := make([]string, 0, len(rec))
		for k := range rec {
			if k != "time" && k != "level" && k != "msg" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%v", k, rec[k]))
		}
		kind := "warning"
		if level == "ERROR" {
			kind = "error"
		}
		if len(parts) > 0 {
			msg += " (" + strings.Join(parts, ", ") + ")"
		}
		out = append(out, kind+": "+msg)
	}
	return out
}
