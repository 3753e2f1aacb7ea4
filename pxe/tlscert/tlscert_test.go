package tlscert

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/lockfile"
)

func TestEnsureCertificateCreatesOnceAndReuses(t *testing.T) {
	state := t.TempDir()
	ctx := context.Background()
	c1, fp1, err := EnsureCertificate(ctx, state, []string{"10.77.0.2", "pxe.lab.example"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(state, dirName)
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, keyFileName): 0o600, filepath.Join(dir, certFileName): 0o644} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s mode = %04o, want %04o", filepath.Base(path), got, want)
		}
	}
	leaf, err := x509.ParseCertificate(c1.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := leaf.PublicKeyAlgorithm; got != x509.ECDSA {
		t.Errorf("key algorithm = %v, want ECDSA", got)
	}
	if len(leaf.IPAddresses) != 1 || !leaf.IPAddresses[0].Equal(net.ParseIP("10.77.0.2")) {
		t.Errorf("IP SANs = %v, want [10.77.0.2]", leaf.IPAddresses)
	}
	if diff := cmp.Diff([]string{"pxe.lab.example"}, leaf.DNSNames); diff != "" {
		t.Errorf("DNS SANs (-want +got):\n%s", diff)
	}
	if err := leaf.CheckSignature(leaf.SignatureAlgorithm, leaf.RawTBSCertificate, leaf.Signature); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
	pem1, _ := os.ReadFile(filepath.Join(dir, certFileName))

	c2, fp2, err := EnsureCertificate(ctx, state, []string{"other.example"})
	if err != nil {
		t.Fatal(err)
	}
	pem2, _ := os.ReadFile(filepath.Join(dir, certFileName))
	if fp1 != fp2 || string(pem1) != string(pem2) || string(c1.Certificate[0]) != string(c2.Certificate[0]) {
		t.Errorf("second call made a new certificate: %s then %s", fp1, fp2)
	}
	if want := Fingerprint(c1.Certificate[0]); fp1 != want {
		t.Errorf("fingerprint = %s, want %s", fp1, want)
	}
}

func TestEnsureCertificateRemakesAPairCutShort(t *testing.T) {
	state := t.TempDir()
	_, fp1, err := EnsureCertificate(context.Background(), state, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(state, dirName, certFileName))
	_, fp2, err := EnsureCertificate(context.Background(), state, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fp1 == fp2 {
		t.Error("a key without its certificate was reused")
	}
}

func TestEnsureCertificateRefusesAnOpenKey(t *testing.T) {
	for name, path := range map[string]string{"key": filepath.Join(dirName, keyFileName), "folder": dirName} {
		t.Run("a readable "+name, func(t *testing.T) {
			state := t.TempDir()
			if _, _, err := EnsureCertificate(context.Background(), state, nil); err != nil {
				t.Fatal(err)
			}
			os.Chmod(filepath.Join(state, path), 0o755)
			_, _, err := EnsureCertificate(context.Background(), state, nil)
			if !errors.Is(err, ErrInsecureKey) {
				t.Errorf("err = %v, want ErrInsecureKey", err)
			}
		})
	}
}

func TestEnsureCertificateHonoursItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := EnsureCertificate(ctx, t.TempDir(), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestEnsureCertificateWaitsForAnotherUntilItsContextEnds(t *testing.T) {
	state := t.TempDir()
	if err := os.MkdirAll(filepath.Join(state, dirName), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := lockfile.TryLock(filepath.Join(state, dirName, ".lock"), "another caller")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := EnsureCertificate(ctx, state, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
}

func TestEnsureCertificateConcurrentCallersAgree(t *testing.T) {
	state := t.TempDir()
	fps := make([]string, 6)
	var wg sync.WaitGroup
	for i := range fps {
		wg.Go(func() {
			_, fp, err := EnsureCertificate(context.Background(), state, nil)
			if err != nil {
				t.Error(err)
			}
			fps[i] = fp
		})
	}
	wg.Wait()
	for _, fp := range fps[1:] {
		if fp != fps[0] {
			t.Fatalf("fingerprints differ: %v", fps)
		}
	}
}

func TestFingerprintMatchesOpenSSL(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("openssl is missing (PLASMA_E2E=1)")
		}
		t.Skip("openssl is missing")
	}
	state := t.TempDir()
	_, fp, err := EnsureCertificate(context.Background(), state, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(openssl, "x509", "-noout", "-fingerprint", "-sha256", "-in", filepath.Join(state, dirName, certFileName)).Output()
	if err != nil {
		t.Fatal(err)
	}
	// "sha256 Fingerprint=AB:CD:…" (the prefix's case differs by version)
	_, got, ok := strings.Cut(strings.TrimSpace(string(out)), "=")
	if !ok || got != fp {
		t.Errorf("openssl says %q, Fingerprint %q", out, fp)
	}
}

func TestPinnedClientConnects(t *testing.T) {
	state := t.TempDir()
	cert, fp, err := EnsureCertificate(context.Background(), state, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "pinned") }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused pins end handshakes
	srv.StartTLS()
	defer srv.Close()
	get := func(pin string) (string, error) {
		cfg, err := PinnedTLSConfig(pin)
		if err != nil {
			return "", err
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := c.Get(srv.URL)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	tests := map[string]struct {
		pin    string
		wantOK bool
	}{
		"the installer's format connects":              {fp, true},
		"lower case without colons connects":           {strings.ToLower(strings.ReplaceAll(fp, ":", "")), true},
		"another certificate's fingerprint is refused": {Fingerprint([]byte("another")), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			body, err := get(tc.pin)
			if tc.wantOK && (err != nil || body != "pinned") {
				t.Errorf("GET = %q, %v; want pinned", body, err)
			}
			if !tc.wantOK && (err == nil || !strings.Contains(err.Error(), "is not the pinned")) {
				t.Errorf("GET = %q, %v; want a pin error", body, err)
			}
		})
	}
}

func TestParseFingerprint(t *testing.T) {
	sum := sha256.Sum256([]byte("x"))
	fp := Fingerprint([]byte("x"))
	tests := map[string]struct {
		in      string
		wantErr bool
	}{
		"upper case with colons": {fp, false},
		"lower case":             {strings.ToLower(fp), false},
		"no colons":              {strings.ReplaceAll(fp, ":", ""), false},
		"surrounding space":      {" " + fp + "\n", false},
		"too short":              {fp[:len(fp)-3], true},
		"not hex":                {strings.Replace(fp, fp[:2], "ZZ", 1), true},
		"SHA-1 length":           {strings.Repeat("AB:", 19) + "AB", true},
		"empty":                  {"", true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseFingerprint(tc.in)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidFingerprint) {
					t.Errorf("err = %v, want ErrInvalidFingerprint", err)
				}
				return
			}
			if err != nil || got != sum {
				t.Errorf("ParseFingerprint = %x, %v; want %x", got, err, sum)
			}
		})
	}
	if got := len(fp); got != 32*3-1 {
		t.Errorf("fingerprint %q has %d characters, want 95", fp, got)
	}
}

func FuzzParseFingerprint(f *testing.F) {
	f.Add(Fingerprint([]byte("seed")))
	f.Add("ab:cd")
	f.Add(strings.Repeat("0", 64))
	f.Fuzz(func(t *testing.T, s string) {
		sum, err := ParseFingerprint(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidFingerprint) {
				t.Fatalf("error %v does not wrap ErrInvalidFingerprint", err)
			}
			return
		}
		again, err := ParseFingerprint(formatFingerprint(sum))
		if err != nil || again != sum {
			t.Fatalf("round trip of %q: %x, %v", s, again, err)
		}
	})
}

// TestReadFingerprint: the fingerprint read from the certificate alone is
// EnsureCertificate's; no certificate is fs.ErrNotExist, and nothing is
// made.
func TestReadFingerprint(t *testing.T) {
	state := t.TempDir()
	if _, err := ReadFingerprint(state); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no certificate: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Join(state, dirName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFingerprint made %s: %v", dirName, err)
	}
	_, want, err := EnsureCertificate(context.Background(), state, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFingerprint(state); err != nil || got != want {
		t.Errorf("ReadFingerprint = %q, %v; want %q", got, err, want)
	}
}

// TestPublicKeyPinIsWhatCurlPins: curl -k --pinnedpubkey with the
// certificate's PublicKeyPin reaches a server with that certificate,
// and with another certificate's pin is refused before it sends.
func TestPublicKeyPinIsWhatCurlPins(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("curl is missing (PLASMA_E2E=1)")
		}
		t.Skip("curl is missing")
	}
	cert, _, err := EnsureCertificate(context.Background(), t.TempDir(), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := EnsureCertificate(context.Background(), t.TempDir(), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "reached") }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()
	for _, tc := range []struct {
		name string
		der  []byte
		ok   bool
	}{{"its own pin", cert.Certificate[0], true}, {"another's pin", other.Certificate[0], false}} {
		pin, err := PublicKeyPin(tc.der)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(pin, "sha256//") {
			t.Errorf("pin %q lacks sha256//", pin)
		}
		out, err := exec.Command(curl, "-fsS", "-k", "--pinnedpubkey", pin, "--max-time", "10", srv.URL).CombinedOutput()
		if got := err == nil && string(out) == "reached"; got != tc.ok {
			t.Errorf("%s: curl reached the server: %v, want %v (%v: %s)", tc.name, got, tc.ok, err, out)
		}
	}
	if _, err := PublicKeyPin([]byte("not a certificate")); err == nil {
		t.Error("PublicKeyPin of a non-certificate: no error")
	}
}
