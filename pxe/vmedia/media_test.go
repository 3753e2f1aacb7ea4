package vmedia

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// answering is a backend whose MediaAnswer answers pve1 on its medium
// and lets pve2 fetch its answer (nil), counting claims.
type answering struct{ claims atomic.Int32 }

func (*answering) Allow(net.HardwareAddr) bool { return false }
func (*answering) Boot(context.Context, string) (backend.Boot, error) {
	return backend.Boot{}, nil
}
func (*answering) Answer(context.Context, backend.AnswerRequest) (*backend.Answer, error) {
	return nil, backend.ErrNoAnswer
}
func (b *answering) MediaAnswer(_ context.Context, node string, req backend.AnswerRequest) (*backend.Answer, error) {
	if node == "pve2" {
		return nil, nil
	}
	reg := vmNode(node)
	reg.BootDisk = answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}
	a, err := registry.Build(reg, registry.BuildOptions{Site: registry.Site{Domain: "example.org"}, RootPassword: "long-enough-pw", Installer: req.Version})
	if err != nil {
		return nil, err
	}
	return &backend.Answer{Node: node, Answer: a, Header: "# for " + req.ClientIP,
		Claim: func(context.Context) error { b.claims.Add(1); return nil }}, nil
}

// The window's media of a release: pve1's ISO holds its answer, rendered
// for the release's installer, and an iso-mode mode file, as xorriso
// reads them from the image the handler served; pve2's is the release
// ISO byte for byte.
func TestMediaOfARelease(t *testing.T) {
	x, rel, iso := releaseISO(t)
	l := newLab(t, 0)
	b := &answering{}
	var logs strings.Builder
	l.h.log = slog.New(slog.NewTextHandler(&logs, nil))
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	l.h.cfg.Media = MediaOf(b, Release{Dir: rel, Version: answer.Version92, BaseURL: "https://192.0.2.1:8090"})
	fetch := func(node string) string {
		srv := httptest.NewServer(l.h)
		defer srv.Close()
		resp, err := http.Get(srv.URL + l.armed(t, node))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		img, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s's medium: %d %s", node, resp.StatusCode, img)
		}
		p := filepath.Join(t.TempDir(), node+".iso")
		os.WriteFile(p, img, 0o600)
		return p
	}
	got := fetch("pve1")
	out := t.TempDir()
	if msg, err := exec.Command(x, "-indev", got, "-osirrox", "on", "-extract", "/answer.toml", filepath.Join(out, "answer.toml"),
		"-extract", "/auto-installer-mode.toml", filepath.Join(out, "mode.toml")).CombinedOutput(); err != nil {
		t.Fatalf("xorriso: %v\n%s", err, msg)
	}
	a, _ := os.ReadFile(filepath.Join(out, "answer.toml"))
	if dec, err := answer.Decode(a, answer.Version92); err != nil || dec.Global.FQDN.Name != "pve1.example.org" || !strings.Contains(string(a), "for 127.0.0.1") {
		t.Errorf("answer on the medium: %v\n%s", err, a)
	}
	if m, _ := os.ReadFile(filepath.Join(out, "mode.toml")); !strings.HasPrefix(string(m), "mode = \"iso\"\n") {
		t.Errorf("mode file on the medium: %q", m)
	}
	if b.claims.Load() != 1 {
		t.Errorf("claimed %d times; want once", b.claims.Load())
	}
	plain, _ := os.ReadFile(fetch("pve2"))
	want, _ := os.ReadFile(iso)
	if string(plain) != string(want) || b.claims.Load() != 1 {
		t.Errorf("pve2's medium is not the release ISO (%d bytes, want %d)", len(plain), len(want))
	}
}

// releaseISO writes a release folder whose ISO (made by xorriso) has an
// http-mode file and a .cd-info, and returns xorriso, the folder and the
// ISO.
func releaseISO(t *testing.T) (x, rel, iso string) {
	t.Helper()
	x, err := exec.LookPath("xorriso")
	if err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("xorriso not found (Debian package xorriso)")
		}
		t.Skip("xorriso not found")
	}
	dir, rel := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "auto-installer-mode.toml"), []byte("mode = \"http\"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".cd-info"), []byte("PRODUCT='pve'\n"), 0o644)
	iso = filepath.Join(rel, bootassets.AssetISO)
	if out, err := exec.Command(x, "-as", "mkisofs", "-quiet", "-R", "-J", "-o", iso, dir).CombinedOutput(); err != nil {
		t.Fatalf("xorriso: %v\n%s", err, out)
	}
	return x, rel, iso
}
