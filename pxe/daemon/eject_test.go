package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// servedMedia is power.Media over one image server: every node's medium
// is the same small image under /media/NAME.iso while armed.
type servedMedia struct {
	srv  *httptest.Server
	mu   sync.Mutex
	live map[string]bool
}

func newServedMedia(t *testing.T) *servedMedia {
	m := &servedMedia{live: map[string]bool{}}
	img := bytes.Repeat([]byte("ISO"), 1<<16)
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		ok := m.live[strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/media/"), ".iso")]
		m.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "n.iso", time.Unix(0, 0), bytes.NewReader(img))
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *servedMedia) Arm(_ context.Context, name string, _ bool) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.live[name] = true
	return m.srv.URL + "/media/" + name + ".iso", nil
}

func (m *servedMedia) Disarm(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.live, name)
	return nil
}

func (m *servedMedia) Ours(image string) bool { return strings.HasPrefix(image, m.srv.URL+"/media/") }

func (m *servedMedia) armed(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live[name]
}

// TestMediaAreEjectedOnInstalledAndWhenTheWindowCloses: the window's
// wiring ejects a virtual-media node's medium (and kills its URL) as
// soon as the node reports installed, and every other one when the
// window closes; an image that is not ours stays.
func TestMediaAreEjectedOnInstalledAndWhenTheWindowCloses(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	stores, err := store.Open(ctx, dir, store.Options{SecretsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := window.Write(dir, &window.Record{PID: os.Getpid(), Started: time.Now(), Deadline: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	secrets, err := stores.Secrets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	media := newServedMedia(t)
	fakes := map[string]*fakeredfish.Server{}
	for _, name := range []string{"a1", "b1"} {
		fake := fakeredfish.New(fakeredfish.Config{User: "root", Password: "pw", Media: fakeredfish.MediaConfig{Style: fakeredfish.MediaUnderManager, Dir: t.TempDir(), RangeBytes: 64 << 10}})
		srv := httptest.NewTLSServer(fake)
		t.Cleanup(srv.Close)
		sum := sha256.Sum256(srv.Certificate().Raw)
		r := registry.Registration{Name: name, MACs: []string{map[string]string{"a1": "52:54:00:00:00:a1", "b1": "52:54:00:00:00:b1"}[name]}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny},
			BMC: &registry.BMC{URL: "redfish://" + strings.TrimPrefix(srv.URL, "https://"), User: "root", Fingerprint: hex.EncodeToString(sum[:])}, BootMethod: registry.BootVirtualMedia}
		if _, err := stores.Registrations().Register(ctx, r, registry.RegisterOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := secrets.WriteBMCPassword(ctx, name, "pw"); err != nil {
			t.Fatal(err)
		}
		fakes[name] = fake
	}
	b := &bmcs{stores: stores, events: stores.Events(), media: media, log: slog.New(slog.DiscardHandler)}
	for name := range fakes {
		req, _ := b.req(ctx, name)
		if _, err := power.Boot(ctx, req); err != nil {
			t.Fatalf("boot %s: %v", name, err)
		}
	}
	stop := ejectWhileOpen(ctx, b)
	image := func(name string) string { return fakes[name].Media()[1].Image }
	if err := stores.Events().Append(ctx, backend.Event{Time: time.Now(), Kind: events.Installed, Node: "a1"}); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); image("a1") != "" && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
	}
	if image("a1") != "" || media.armed("a1") {
		t.Errorf("a1 reported installed: its medium %q, armed %t; want ejected and disarmed", image("a1"), media.armed("a1"))
	}
	if !media.Ours(image("b1")) || !media.armed("b1") {
		t.Errorf("b1, still installing, lost its medium: %q armed %t", image("b1"), media.armed("b1"))
	}
	stop()
	if image("b1") != "" || media.armed("b1") {
		t.Errorf("the window closed: b1's medium %q, armed %t; want ejected and disarmed", image("b1"), media.armed("b1"))
	}
}
