package tlscert

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/lockfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
)

// Where [EnsureCertificate] keeps the server's certificate.
const (
	// dirName is the folder of the state folder that holds the
	// certificate and its key (mode 0700).
	dirName = "tls"
	// certFileName is the certificate, PEM.
	certFileName = "cert.pem"
	// keyFileName is the private key, PEM PKCS #8, mode 0600.
	keyFileName = "key.pem"
	// certValidity is how long a new certificate is valid. The installer
	// ignores expiry when it pins a fingerprint (reference §2.5), and a
	// new certificate would break every ISO that bakes in the old
	// fingerprint, so it is long.
	certValidity = 20 * 365 * 24 * time.Hour
)

var (
	// ErrInsecureKey is returned (wrapped) by [EnsureCertificate] when the
	// key file or its folder can be read by others than the owner.
	ErrInsecureKey = errors.New("TLS key readable by others")
	// ErrInvalidFingerprint is returned (wrapped) by [ParseFingerprint]
	// for a value that is not a SHA-256 fingerprint.
	ErrInvalidFingerprint = errors.New("invalid certificate fingerprint")
)

// EnsureCertificate returns the server's TLS certificate kept in
// <stateDir>/tls/, and its fingerprint in the installer's format (see
// [Fingerprint]). On first use it creates a self-signed ECDSA P-256
// certificate naming hosts (host names or IP addresses; "localhost" when
// none) in cert.pem, and its key in key.pem (0600, folder 0700). After
// that it loads the same pair whatever hosts says: the fingerprint that
// prepared ISOs carry stays valid. Concurrent callers, in any process,
// get the same certificate; one still waiting for another when ctx ends
// gets an error wrapping ctx's. A key file or folder open to group or
// others gives an error wrapping [ErrInsecureKey].
func EnsureCertificate(ctx context.Context, stateDir string, hosts []string) (tls.Certificate, string, error) {
	if err := ctx.Err(); err != nil {
		return tls.Certificate{}, "", fmt.Errorf("tls certificate: %w", err)
	}
	dir := filepath.Join(stateDir, dirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return tls.Certificate{}, "", fmt.Errorf("tls certificate: %w", err)
	}
	lk, err := lockfile.Acquire(ctx, filepath.Join(dir, ".lock"), "node-provisioner tls", 10*time.Millisecond)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			// Another caller held the lock until ctx ended.
			return tls.Certificate{}, "", fmt.Errorf("tls certificate: %w (%v)", cerr, err)
		}
		return tls.Certificate{}, "", fmt.Errorf("tls certificate: %w", err)
	}
	defer lk.Unlock()
	certPath, keyPath := filepath.Join(dir, certFileName), filepath.Join(dir, keyFileName)
	if err := atomicfile.CleanTemp(dir); err != nil {
		return tls.Certificate{}, "", fmt.Errorf("tls certificate: %w", err)
	}
	_, certErr := os.Stat(certPath)
	_, keyErr := os.Stat(keyPath)
	if errors.Is(certErr, fs.ErrNotExist) || errors.Is(keyErr, fs.ErrNotExist) {
		// Neither, or a pair cut short before the certificate was written:
		// no fingerprint was ever shown, so make a new pair.
		if err := writeCertificate(certPath, keyPath, hosts); err != nil {
			return tls.Certificate{}, "", err
		}
	}
	if err := checkPrivate(dir, keyPath); err != nil {
		return tls.Certificate{}, "", err
	}
	cert, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("tls certificate %s: %w", certPath, err)
	}
	return cert, Fingerprint(cert.Certificate[0]), nil
}

func checkPrivate(dir, keyPath string) error {
	for _, p := range []string{dir, keyPath} {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("tls certificate: %w", err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			want := "0600"
			if fi.IsDir() {
				want = "0700"
			}
			return fmt.Errorf("tls certificate: %s has mode %04o: %w (want %s; chmod it)", p, fi.Mode().Perm(), ErrInsecureKey, want)
		}
	}
	return nil
}

func writeCertificate(certPath, keyPath string, hosts []string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("tls certificate: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return fmt.Errorf("tls certificate: %w", err)
	}
	now := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "plasma-node provisioning server"},
		NotBefore:             now,
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	if len(hosts) == 0 {
		hosts = []string{"localhost"}
	}
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("tls certificate: create: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("tls certificate: %w", err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	// Key first: a pair cut short lacks its certificate and is made anew.
	if err := atomicfile.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return fmt.Errorf("tls certificate: %w", err)
	}
	if err := atomicfile.WriteFile(certPath, certPEM, 0o644); err != nil {
		return fmt.Errorf("tls certificate: %w", err)
	}
	return nil
}

// Fingerprint returns the SHA-256 fingerprint of a DER certificate in the
// installer's format: upper-case hex pairs joined by ':', as
// `openssl x509 -noout -fingerprint -sha256` prints it after "=" and as
// prepare-iso --cert-fingerprint takes it (reference §2.5).
func Fingerprint(certDER []byte) string { return formatFingerprint(sha256.Sum256(certDER)) }

// PublicKeyPin returns a DER certificate's public key pin as curl's
// --pinnedpubkey takes it: "sha256//" and the base64 of the SHA-256 of
// its SubjectPublicKeyInfo. curl -k with it reaches only a server
// holding that key.
func PublicKeyPin(certDER []byte) (string, error) {
	c, err := x509.ParseCertificate(certDER)
	if err != nil {
		return "", fmt.Errorf("public key pin: %w", err)
	}
	sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
	return "sha256//" + base64.StdEncoding.EncodeToString(sum[:]), nil
}

func formatFingerprint(sum [sha256.Size]byte) string {
	var b strings.Builder
	for i, c := range sum {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", c)
	}
	return b.String()
}

// ParseFingerprint reads a SHA-256 fingerprint the way the installer does:
// hex of either case, colons optional. Anything else gives an error
// wrapping [ErrInvalidFingerprint].
func ParseFingerprint(s string) ([sha256.Size]byte, error) {
	var out [sha256.Size]byte
	raw := strings.ReplaceAll(strings.TrimSpace(s), ":", "")
	b, err := hex.DecodeString(raw)
	if err != nil || len(b) != sha256.Size {
		shown := s
		if len(shown) > 120 {
			shown = shown[:120] + "…"
		}
		return out, fmt.Errorf("%w %q: want 32 hex pairs, colons optional, such as AB:CD:…", ErrInvalidFingerprint, shown)
	}
	copy(out[:], b)
	return out, nil
}

// NormalizeFingerprint returns a SHA-256 fingerprint read as
// [ParseFingerprint] reads it, written as [Fingerprint] writes one:
// upper-case hex pairs joined by ':'. Errors wrap [ErrInvalidFingerprint].
func NormalizeFingerprint(s string) (string, error) {
	sum, err := ParseFingerprint(s)
	if err != nil {
		return "", err
	}
	return formatFingerprint(sum), nil
}

// ServerTLSConfig returns the configuration every server of the project
// listens with: TLS 1.2 or later, and under 1.2 only the ECDHE suites
// with AEAD ciphers (AES-GCM, ChaCha20-Poly1305); TLS 1.3's suites are
// all AEAD. No CBC and no SHA-1 MAC is offered.
func ServerTLSConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		CipherSuites: aeadSuites(),
	}
}

// aeadSuites are the TLS 1.2 suites [ServerTLSConfig] offers.
func aeadSuites() []uint16 {
	return []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	}
}

// PinnedTLSConfig returns a client configuration that trusts exactly the
// server certificate with this fingerprint, ignoring its chain, names and
// dates, as the installer does when given one (reference §2.5).
func PinnedTLSConfig(fingerprint string) (*tls.Config, error) {
	want, err := ParseFingerprint(fingerprint)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		InsecureSkipVerify: true, // replaced by the pin check below
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("tls pin: server sent no certificate")
			}
			got := sha256.Sum256(raw[0])
			if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				return fmt.Errorf("tls pin: server certificate %s is not the pinned %s", Fingerprint(raw[0]), formatFingerprint(want))
			}
			return nil
		},
	}, nil
}

// maxCertFile bounds the certificate read by [ReadFingerprint]: 64 KiB.
const maxCertFile = 64 << 10

// ReadFingerprint returns the fingerprint (see [Fingerprint]) of the
// certificate kept in <stateDir>/tls/ by [EnsureCertificate], reading
// only the certificate: it creates nothing and needs no access to the
// key. No certificate is an error wrapping [fs.ErrNotExist].
func ReadFingerprint(stateDir string) (string, error) {
	return FileFingerprint(filepath.Join(stateDir, dirName, certFileName))
}

// FileFingerprint returns the fingerprint of the first certificate of a
// PEM file (a site's certificate given to the daemon), reading nothing
// else.
func FileFingerprint(path string) (string, error) {
	data, err := regularfile.Read(path, maxCertFile)
	if err != nil {
		return "", fmt.Errorf("tls certificate: %w", err)
	}
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return "", fmt.Errorf("tls certificate %s: no PEM CERTIFICATE block", path)
		}
		if b.Type == "CERTIFICATE" {
			return Fingerprint(b.Bytes), nil
		}
	}
}

// LoadCertificate reads a site's certificate (PEM, the leaf first, its
// chain after) and its private key, for a server that does not use the
// state folder's own. The key file must be a regular file no one but its
// owner may read (0600 or stricter, [ErrInsecureKey] otherwise); both
// files are read bounded. It returns the certificate and the leaf's
// fingerprint, which clients pin.
func LoadCertificate(certPath, keyPath string) (tls.Certificate, string, error) {
	fi, err := os.Stat(keyPath)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("tls key: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return tls.Certificate{}, "", fmt.Errorf("tls key: %s has mode %04o: %w (want 0600; chmod it)", keyPath, fi.Mode().Perm(), ErrInsecureKey)
	}
	certPEM, err := regularfile.Read(certPath, maxCertFile)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("tls certificate: %w", err)
	}
	keyPEM, err := regularfile.Read(keyPath, maxCertFile)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("tls key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The key's bytes are never quoted back.
		return tls.Certificate{}, "", fmt.Errorf("tls certificate %s and key %s: not a matching PEM certificate and private key", certPath, keyPath)
	}
	return cert, Fingerprint(cert.Certificate[0]), nil
}
