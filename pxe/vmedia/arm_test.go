package vmedia

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/window"
)

// TestArmOverHTTPS: asked for HTTPS, Arm gives the https:// URL on the
// window's TLS port when the window has TLS, and refuses, armed nothing,
// when it has none; unasked, the URL stays plain HTTP.
func TestArmOverHTTPS(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		rec    window.Record
		https  bool
		prefix string // "" for a refusal
	}{
		{"TLS window, HTTPS", window.Record{URL: "https://192.0.2.1:8443/answer", CertFingerprint: "AB:CD"}, true, "https://192.0.2.1:8443/media/"},
		{"TLS window, listen address only", window.Record{HTTP: "192.0.2.1:8443", CertFingerprint: "AB:CD"}, true, "https://192.0.2.1:8443/media/"},
		{"TLS window, plain", window.Record{URL: "https://192.0.2.1:8443/answer", CertFingerprint: "AB:CD"}, false, "http://192.0.2.1:8443/media/"},
		{"plain window, HTTPS", window.Record{URL: "http://192.0.2.1:8090/answer"}, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.rec.PID, c.rec.Started = os.Getpid(), time.Now().UTC()
			if err := window.Write(dir, &c.rec); err != nil {
				t.Fatal(err)
			}
			d := Dir{StateDir: dir}
			u, err := d.Arm(ctx, "pve1", c.https)
			if c.prefix == "" {
				if !errors.Is(err, ErrNoTLS) {
					t.Fatalf("Arm = %q, %v; want ErrNoTLS", u, err)
				}
				if _, err := readRecord(dir, "pve1", Installer); err == nil {
					t.Error("a refused Arm armed the node")
				}
				return
			}
			if err != nil || !strings.HasPrefix(u, c.prefix) || !d.Ours(u) {
				t.Fatalf("Arm = %q, %v; want %s…", u, err, c.prefix)
			}
		})
	}
}
