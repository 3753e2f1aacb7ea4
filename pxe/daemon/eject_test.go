package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/power/powertest"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/window"
)

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
	media := powertest.NewMedia(t)
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
	if image("a1") != "" || media.Armed("a1") {
		t.Errorf("a1 reported installed: its medium %q, armed %t; want ejected and disarmed", image("a1"), media.Armed("a1"))
	}
	if !media.Ours(image("b1")) || !media.Armed("b1") {
		t.Errorf("b1, still installing, lost its medium: %q armed %t", image("b1"), media.Armed("b1"))
	}
	stop()
	if image("b1") != "" || media.Armed("b1") {
		t.Errorf("the window closed: b1's medium %q, armed %t; want ejected and disarmed", image("b1"), media.Armed("b1"))
	}
}
