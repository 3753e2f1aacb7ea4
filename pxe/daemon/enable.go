package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// ServeLogName is the log, in the state folder, of a window that
// pxe.Enable started as a detached process.
const ServeLogName = "serve.log"

// maxLogSaid bounds what [Enable] reads of the window's log: 1 MiB.
const maxLogSaid = 1 << 20

// Enable starts a window on this host in the background (pxe.Enable)
// and returns it with what it said as it started, from its log
// ([ServeLogName]) as [LogSaid] reads it: its warnings, or why it could
// not start (a port taken). The error is pxe.Enable's; an open window
// wraps window.ErrOpen. voice is the prefix of the window's own
// error lines, such as "node-provisioner: ".
func Enable(ctx context.Context, o pxe.EnableOptions, voice string) (*window.Record, []string, error) {
	path := filepath.Join(o.StateDir, ServeLogName)
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
	return w, LogSaid(io.LimitReader(f, maxLogSaid), voice), err
}

// LogSaid reads a window's log: each warning and error of its JSON
// lines as "warning: msg (key=value, ...)" or "error: ...", keys in
// order, and its other lines that start with voice, without it.
func LogSaid(r io.Reader, voice string) []string {
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
