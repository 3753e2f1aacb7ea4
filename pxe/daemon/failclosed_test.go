package daemon_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/daemon"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

// TestATTLNotInTheFutureRefusesToOpen: a window asked for with a TTL too
// short to end in the future (1ns) is refused with 422 and stays closed,
// instead of opening without a deadline; a pxe.Config TTL in the past is
// refused as well, only NoTTL means no limit.
func TestATTLNotInTheFutureRefusesToOpen(t *testing.T) {
	state := t.TempDir()
	r := start(t, state)
	c := adminClient(t, state, r)
	ctx := context.Background()
	for _, ttl := range []time.Duration{time.Nanosecond, time.Millisecond, 999 * time.Millisecond} {
		_, err := c.OpenWindow(ctx, ttl)
		var ae *client.Error
		if !errors.As(err, &ae) || ae.Status != 422 {
			t.Errorf("open with ttl %s: %v, want 422", ttl, err)
		}
		if w, err := c.Window(ctx); err != nil || w.Open {
			t.Fatalf("after open with ttl %s: %+v %v, want closed", ttl, w, err)
		}
	}
	var ce *pxe.ConfigError
	if _, err := pxe.New(pxe.Config{StateDir: state, TTL: -time.Nanosecond}); !errors.As(err, &ce) || ce.Field != "TTL" {
		t.Errorf("pxe.New with a TTL in the past: %v, want a ConfigError for TTL", err)
	}
	if _, err := pxe.New(pxe.Config{StateDir: state, TTL: pxe.NoTTL}); err != nil {
		t.Errorf("pxe.New with NoTTL: %v", err)
	}
}

// writeSiteCert writes a certificate and key as a site CA would issue
// them, the key with mode keyMode.
func writeSiteCert(t *testing.T, dir string, keyMode os.FileMode) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "provisioner.site.example"},
		DNSNames: []string{"provisioner.site.example"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	certPath, keyPath = filepath.Join(dir, "site.pem"), filepath.Join(dir, "site.key")
	os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), keyMode)
	os.Chmod(keyPath, keyMode)
	return certPath, keyPath
}

// TestDaemonServesASiteCertificateAEADOnly: with TLSCert and TLSKey the
// API serves the site's certificate (its fingerprint in the daemon's
// record, which LocalClient pins), offers no CBC or SHA-1 suite under
// TLS 1.2, and refuses to start with a key others may read.
func TestDaemonServesASiteCertificateAEADOnly(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	certPath, keyPath := writeSiteCert(t, dir, 0o600)
	want, err := tlscert.FileFingerprint(certPath)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(daemon.Config{StateDir: state, Listener: ln, TLSCert: certPath, TLSKey: keyPath, Window: pxe.Config{HTTPAddr: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-d.Ready():
	case err := <-done:
		t.Fatalf("daemon: %v", err)
	}
	if d.Fingerprint() != want {
		t.Errorf("the daemon's fingerprint %s, want the site certificate's %s", d.Fingerprint(), want)
	}
	rec, ok, err := daemon.Running(state)
	if err != nil || !ok || rec.Fingerprint != want {
		t.Fatalf("the daemon's record: %+v %v %v, want the site certificate's fingerprint", rec, ok, err)
	}
	st, _ := folder.OpenTokens(state, nil)
	tok, _ := st.Create(ctx, "reader", apitoken.ScopeRead, time.Time{})
	c, err := daemon.LocalClient(state, rec, tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Window(ctx); err != nil {
		t.Errorf("a local client pinning the record's fingerprint: %v", err)
	}
	addr := d.Addr().String()
	for _, tc := range []struct {
		name  string
		suite uint16
		ok    bool
	}{
		{"ECDHE-ECDSA-AES128-GCM-SHA256", tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, true},
		{"ECDHE-ECDSA-CHACHA20-POLY1305", tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, true},
		{"ECDHE-ECDSA-AES128-CBC-SHA (CBC, SHA-1)", tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, false},
		{"ECDHE-ECDSA-AES256-CBC-SHA (CBC, SHA-1)", tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, false},
		{"ECDHE-ECDSA-AES128-CBC-SHA256", tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, false},
	} {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tc.suite}})
		if conn != nil {
			conn.Close()
		}
		if (err == nil) != tc.ok {
			t.Errorf("TLS 1.2 with only %s: handshake err %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	loose := t.TempDir()
	lc, lk := writeSiteCert(t, loose, 0o644)
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	d2, err := daemon.New(daemon.Config{StateDir: t.TempDir(), Listener: ln2, TLSCert: lc, TLSKey: lk, Window: pxe.Config{HTTPAddr: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d2.Run(context.Background()); !errors.Is(err, tlscert.ErrInsecureKey) {
		t.Errorf("a daemon with a key of mode 0644: %v, want ErrInsecureKey", err)
	}
}

// TestTheDaemonsWindowSaysItsWarningsAndWhyItDidNotOpen: a window opened
// through the daemon's API returns what it warned of as it started (no
// boot assets staged), as GET /window does while it runs; a window that
// cannot start (its HTTP port taken) is refused with 503 and the
// window's own reason, not "see its log", and stays closed.
func TestTheDaemonsWindowSaysItsWarningsAndWhyItDidNotOpen(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	r := start(t, state)
	c := adminClient(t, state, r)
	w, err := c.OpenWindow(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	has := func(ws []string, s string) bool {
		return slices.ContainsFunc(ws, func(w string) bool { return strings.HasPrefix(w, s) })
	}
	if !has(w.Warnings, "no boot assets staged") {
		t.Errorf("open: warnings %q, want no boot assets staged", w.Warnings)
	}
	if st, err := c.Window(ctx); err != nil || !has(st.Warnings, "no boot assets staged") {
		t.Errorf("GET /window of the open window: %+v %v, want its warnings", st, err)
	}
	if err := c.CloseWindow(ctx); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	state = t.TempDir()
	r = startWith(t, state, pxe.Config{HTTPAddr: ln.Addr().String()})
	c = adminClient(t, state, r)
	_, err = c.OpenWindow(ctx, time.Hour)
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 503 || !strings.Contains(ae.Message, "the window did not open") || !strings.Contains(ae.Message, "cannot listen") || strings.Contains(ae.Message, "see its log") {
		t.Errorf("open on a taken port: %v, want 503 with the window's reason", err)
	}
	if st, err := c.Window(ctx); err != nil || st.Open {
		t.Errorf("after the window did not open: %+v %v, want closed", st, err)
	}
}
