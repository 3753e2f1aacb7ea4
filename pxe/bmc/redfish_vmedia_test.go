package bmc_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/bmc"
)

var update = flag.Bool("update", false, "rewrite golden files")

// imageServer serves content as an ISO at a path holding a token, with
// Range, HEAD, ETag and Last-Modified (http.ServeContent), and returns
// the image's URL.
func imageServer(t *testing.T, content []byte) (string, *httptest.Server) {
	t.Helper()
	return imageServerAt(t, "/media/tok-s3cr3t/node.iso", content)
}

// imageServerAt is imageServer serving content at path.
func imageServerAt(t *testing.T, path string, content []byte) (string, *httptest.Server) {
	t.Helper()
	mod := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", `"img1"`)
		http.ServeContent(w, r, "node.iso", mod, bytes.NewReader(content))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + path, srv
}

// recorder wraps a fake BMC and keeps each request's method, path,
// If-Match and JSON body, with the image server's address as IMAGE (and
// the answer image's, when set).
type recorder struct {
	next   http.Handler
	image  string
	answer string
	mu     sync.Mutex
	lines  []string
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	line := r.Method + " " + r.URL.Path
	if m := r.Header.Get("If-Match"); m != "" {
		line += " If-Match:" + m
	}
	if len(b) > 0 {
		var c bytes.Buffer
		if json.Compact(&c, b) == nil {
			b = c.Bytes()
		}
		body := strings.ReplaceAll(string(b), rc.image, "http://IMAGE/media/tok-s3cr3t/node.iso")
		if rc.answer != "" {
			body = strings.ReplaceAll(body, rc.answer, "http://IMAGE/media/tok-4nsw3r/node.img")
		}
		line += " " + body
	}
	rc.mu.Lock()
	rc.lines = append(rc.lines, line)
	rc.mu.Unlock()
	rc.next.ServeHTTP(w, r)
}

// mediaLab is redfishLab with virtual media of style and a recorder.
func mediaLab(t *testing.T, style fakeredfish.MediaStyle, mc fakeredfish.MediaConfig, image string) (*fakeredfish.Server, *recorder, bmc.VirtualMedia) {
	t.Helper()
	mc.Style = style
	if mc.Dir == "" {
		mc.Dir = t.TempDir()
	}
	if mc.RangeBytes == 0 {
		mc.RangeBytes = 1 << 20
	}
	fake := fakeredfish.New(fakeredfish.Config{User: "root", Password: "calvin-pw", Media: mc})
	rec := &recorder{next: fake, image: image}
	srv := httptest.NewTLSServer(rec)
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(srv.Certificate().Raw)
	e, err := bmc.Parse("redfish://" + strings.TrimPrefix(srv.URL, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := bmc.NewRedfish(e, bmc.Credentials{User: "root", Password: "calvin-pw"}, bmc.Options{Fingerprint: hex.EncodeToString(sum[:]), Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	vm, ok := c.(bmc.VirtualMedia)
	if !ok {
		t.Fatal("the Redfish driver is not a bmc.VirtualMedia")
	}
	return fake, rec, vm
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", p, diff)
	}
}

// TestRedfishVirtualMediaRequestShapes drives an install's virtual-media
// steps (insert, boot once from the CD in UEFI mode, power on, eject)
// against the two vendor styles and compares each request (method,
// path, If-Match, JSON body) with the recorded shapes: VirtualMedia
// under the Manager with the InsertMedia and EjectMedia actions (iDRAC,
// OpenBMC), and under the System with PATCH only (older Supermicro).
// The fake downloads the image in parallel ranges, whole.
func TestRedfishVirtualMediaRequestShapes(t *testing.T) {
	content := make([]byte, 3<<20+12345)
	rand.Read(content)
	tests := map[string]struct {
		style  fakeredfish.MediaStyle
		golden string
		medium string
	}{
		"VirtualMedia under the Manager, with actions": {fakeredfish.MediaUnderManager, "vmedia-managers.golden", "CD"},
		"VirtualMedia under the System, PATCH only":    {fakeredfish.MediaUnderSystem, "vmedia-systems.golden", "CD1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			image, _ := imageServer(t, content)
			fake, rec, vm := mediaLab(t, tc.style, fakeredfish.MediaConfig{}, image)
			m, err := vm.InsertMedia(ctx, image, bmc.InsertOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(bmc.Medium{ID: tc.medium, Types: m.Types, Image: image, Inserted: true, ConnectedVia: "URI"}, m); diff != "" {
				t.Errorf("inserted medium (-want +got):\n%s", diff)
			}
			file, err := fake.WaitMedium(ctx, tc.medium)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(file); !bytes.Equal(got, content) {
				t.Errorf("the fake's download differs from the image (%d bytes, want %d)", len(got), len(content))
			}
			if err := vm.SetNextBootCD(ctx, bmc.BootUEFI); err != nil {
				t.Fatal(err)
			}
			if en, tg, mode := fake.Override(); en != "Once" || tg != "Cd" || mode != "UEFI" {
				t.Errorf("override %s %s %s, want Once Cd UEFI", en, tg, mode)
			}
			if err := vm.PowerOn(ctx); err != nil {
				t.Fatal(err)
			}
			if err := vm.EjectMedia(ctx, image); err != nil {
				t.Fatal(err)
			}
			for _, st := range fake.Media() {
				if st.Inserted || st.Image != "" {
					t.Errorf("medium %s still holds an image after the eject", st.ID)
				}
			}
			if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the downloaded image %s stays after the eject: %v", file, err)
			}
			golden(t, tc.golden, strings.Join(rec.lines, "\n")+"\n")
		})
	}
}
