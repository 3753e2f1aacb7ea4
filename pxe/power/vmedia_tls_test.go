package power_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
	"github.com/plasmactl/plasma-node/pxe/vmedia"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// tlsLab is a window serving its media (package vmedia) over TLS with
// its own certificate, node n1 booting from virtual media behind a fake
// Redfish BMC that trusts trust (nil: the system's roots, not the
// window's), and BMC media_tls as bmcTLS. A window without TLS when
// plain.
func tlsLab(t *testing.T, bmcTLS, plain, trusted bool) (*fakeredfish.Server, power.Request, []byte, string) {
	t.Helper()
	state := t.TempDir()
	image := bytes.Repeat([]byte("ISO over TLS "), 40<<10)
	h := vmedia.New(vmedia.Config{StateDir: state, WindowPID: os.Getpid(), Media: func(context.Context, string, vmedia.Kind, string) (*vmedia.Medium, error) {
		return &vmedia.Medium{Image: bytes.NewReader(image), Size: int64(len(image)), ModTime: time.Unix(0, 0)}, nil
	}})
	t.Cleanup(func() { h.Close() })
	win := httptest.NewUnstartedServer(h)
	win.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	cert, fp, err := tlscert.EnsureCertificate(t.Context(), state, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &window.Record{PID: os.Getpid(), Started: time.Now(), Deadline: time.Now().Add(time.Hour), HTTP: win.Listener.Addr().String()}
	if plain {
		win.Start()
	} else {
		win.TLS = tlscert.ServerTLSConfig(cert)
		win.StartTLS()
		rec.CertFingerprint = fp
	}
	t.Cleanup(win.Close)
	if err := window.Write(state, rec); err != nil {
		t.Fatal(err)
	}
	var roots *x509.CertPool
	if trusted {
		pem, err := os.ReadFile(filepath.Join(state, "tls", "cert.pem"))
		if err != nil {
			t.Fatal(err)
		}
		roots = x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
	}
	fake := fakeredfish.New(fakeredfish.Config{User: "root", Password: "calvin-pw", Media: fakeredfish.MediaConfig{Style: fakeredfish.MediaUnderManager, Dir: t.TempDir(), RangeBytes: 64 << 10, RootCAs: roots}})
	req := vmRequest(t, fake, state, bmcTLS, vmedia.Dir{StateDir: state})
	return fake, req, image, state
}

// TestBootFromVirtualMediaOverHTTPS: with media_tls (the BMC's or the
// site's) the BMC is given the medium's https:// URL on the window's TLS
// port, and downloads it verifying the window's certificate; a BMC that
// does not trust it refuses the insertion (a Redfish error), and the URL
// dies; media_tls with a window without TLS is refused naming the
// setting, before the BMC is touched.
func TestBootFromVirtualMediaOverHTTPS(t *testing.T) {
	ctx := t.Context()
	t.Run("trusted", func(t *testing.T) {
		fake, req, image, _ := tlsLab(t, true, false, true)
		if _, err := power.Boot(ctx, req); err != nil {
			t.Fatal(err)
		}
		img := inserted(fake)["CD"]
		host, _, _ := strings.Cut(strings.TrimPrefix(img, "https://"), "/")
		if _, port, _ := net.SplitHostPort(host); !strings.HasPrefix(img, "https://") || port == "" {
			t.Errorf("the BMC was given %q; want the window's https:// URL", img)
		}
		file, err := fake.WaitMedium(ctx, "CD")
		if err != nil {
			t.Fatalf("the BMC could not fetch the medium over HTTPS: %v", err)
		}
		if got, _ := os.ReadFile(file); !bytes.Equal(got, image) {
			t.Errorf("the BMC downloaded %d bytes, not the %d-byte image", len(got), len(image))
		}
	})
	t.Run("the site's, trusted", func(t *testing.T) {
		fake, req, _, _ := tlsLab(t, false, false, true)
		req.Site.MediaTLS = true
		if _, err := power.Boot(ctx, req); err != nil {
			t.Fatal(err)
		}
		if img := inserted(fake)["CD"]; !strings.HasPrefix(img, "https://") {
			t.Errorf("the BMC was given %q; want https://", img)
		}
	})
	t.Run("not trusted", func(t *testing.T) {
		fake, req, _, state := tlsLab(t, true, false, false)
		_, err := power.Boot(ctx, req)
		if !errors.Is(err, bmc.ErrImageRefused) || !strings.Contains(err.Error(), "not trusted") {
			t.Fatalf("Boot: %v; want the image refused, its server's certificate not trusted", err)
		}
		if img := inserted(fake)["CD"]; img != "" {
			t.Errorf("the CD holds %q", img)
		}
		if _, err := os.Stat(filepath.Join(state, vmedia.DirName, "n1.json")); err == nil {
			t.Error("the refused medium's URL is still armed")
		}
	})
	t.Run("no TLS in the window", func(t *testing.T) {
		fake, req, _, _ := tlsLab(t, false, true, true)
		req.Site.MediaTLS = true
		_, err := power.Boot(ctx, req)
		if !errors.Is(err, vmedia.ErrNoTLS) || !strings.Contains(err.Error(), "media_tls") {
			t.Fatalf("Boot: %v; want vmedia.ErrNoTLS naming media_tls", err)
		}
		if img := inserted(fake)["CD"]; img != "" {
			t.Errorf("the CD holds %q", img)
		}
		for _, c := range fake.Calls() {
			if strings.Contains(c, "Reset") || strings.Contains(c, "InsertMedia") {
				t.Errorf("the BMC was asked %s", c)
			}
		}
	})
}
