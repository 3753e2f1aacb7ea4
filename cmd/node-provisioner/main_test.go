package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/cli"
)

type result struct {
	code        int
	stdout, err string
}

func np(t *testing.T, state string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"--state-dir", state, "--secrets-dir", filepath.Join(state, "secrets")}, args...)
	code := run(context.Background(), full, &out, &errb)
	return result{code, out.String(), errb.String()}
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func TestVersion(t *testing.T) {
	r := np(t, t.TempDir(), "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "node-provisioner ") {
		t.Errorf("version: %d %q", r.code, r.stdout)
	}
	if f := np(t, t.TempDir(), "--version"); f.code != 0 || f.stdout != r.stdout {
		t.Errorf("--version: %d %q, want %q", f.code, f.stdout, r.stdout)
	}
}

// TestEveryCommandHasShortAndExample walks the whole command tree, help
// and completion included.
func TestEveryCommandHasShortAndExample(t *testing.T) {
	var out, errb bytes.Buffer
	root := newRoot(&app{out: &out, errw: &errb}, &out, &errb)
	if missing := cli.MissingHelp(root); len(missing) > 0 {
		t.Errorf("commands without help:\n%s", strings.Join(missing, "\n"))
	}
}

func TestCompletionAndJSONLogs(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		if r := np(t, t.TempDir(), "completion", sh); r.code != 0 || !strings.Contains(r.stdout, "node-provisioner") {
			t.Errorf("completion %s: exit %d, %d bytes, %s", sh, r.code, len(r.stdout), r.err)
		}
	}
	if r := np(t, t.TempDir(), "register", "pve1", "--mac", "52:54:00:de:ad:01", "--boot-disk", "sda"); r.code != 0 || strings.Contains(r.err, "level=INFO") {
		t.Errorf("register without -v: exit %d, stderr %q; want no INFO lines", r.code, r.err)
	}
	r := np(t, t.TempDir(), "--log-format", "json", "-v", "register", "pve1", "--mac", "52:54:00:de:ad:01", "--boot-disk", "sda")
	if r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(r.err), &rec); err != nil || rec["msg"] != "registration written" || rec["node"] != "pve1" {
		t.Errorf("--log-format json: %v: %q", err, r.err)
	}
}

// TestPlasmaNodeFindsThisStateFolder keeps plasma-node's default for a
// pxe platform's registrations where node-provisioner keeps them.
func TestPlasmaNodeFindsThisStateFolder(t *testing.T) {
	if DefaultStateDir != plasmanode.DefaultProvisionerDir || plasmanode.EnvProvisionerDir != "NODE_PROVISIONER_STATE_DIR" {
		t.Errorf("node-provisioner uses %s ($NODE_PROVISIONER_STATE_DIR), plasma-node looks in %s ($%s)", DefaultStateDir, plasmanode.DefaultProvisionerDir, plasmanode.EnvProvisionerDir)
	}
}
