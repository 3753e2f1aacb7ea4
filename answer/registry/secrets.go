package registry

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
)

// passwordBytes is the randomness in a generated password: 24 bytes (192
// bits, as TAPPaaS's token_urlsafe(24)) make 32 characters.
const passwordBytes = 24

// GeneratePassword returns a new root password: 32 characters of the
// URL-safe base64 alphabet (A-Z, a-z, 0-9, '-', '_') from crypto/rand.
func GeneratePassword() (string, error) {
	b := make([]byte, passwordBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// DefaultSecretsDirName is the secrets folder's name in the home folder.
const DefaultSecretsDirName = ".node-secrets"

// DefaultSecretsDir returns ~/.node-secrets, TAPPaaS's place for node
// passwords.
func DefaultSecretsDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("default secrets folder: %w", err)
	}
	return filepath.Join(home, DefaultSecretsDirName), nil
}

// SecretStore is the folder that keeps each node's generated root
// password in <name>.pw (mode 0600, folder 0700). It never logs a secret.
type SecretStore struct {
	dir string
}

// OpenSecretStore opens dir, creating it with mode 0700, and tightens its
// mode to 0700 when it is looser (group or others have any access).
func OpenSecretStore(dir string) (*SecretStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open secrets folder %s: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("open secrets folder %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open secrets folder %s: not a folder", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("open secrets folder %s: tighten mode %v to 0700: %w", dir, fi.Mode().Perm(), err)
		}
	}
	return &SecretStore{dir: dir}, nil
}

// Dir returns the secrets folder.
func (s *SecretStore) Dir() string { return s.dir }

// PasswordPath returns where the password of node name is kept.
func (s *SecretStore) PasswordPath(name string) string {
	return filepath.Join(s.dir, name+".pw")
}

// WritePassword writes pw and a newline to <dir>/<name>.pw with mode 0600,
// atomically, replacing an older one, and returns the path. A bad name
// gives an error wrapping [ErrInvalidName]. No error includes pw.
func (s *SecretStore) WritePassword(name, pw string) (path string, err error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	if pw == "" || strings.ContainsAny(pw, "\r\n") {
		return "", fmt.Errorf("write password of %s: the password is empty or spans lines", name)
	}
	path = s.PasswordPath(name)
	if err := atomicfile.WriteFile(path, []byte(pw+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write password of %s: %w", name, err)
	}
	return path, nil
}

// StageRootPassword writes pw to a temporary file beside
// <dir>/<name>.pw (0600); its Commit puts it in place, replacing an older
// one. No error includes pw.
func (s *SecretStore) StageRootPassword(name, pw string) (Staged, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if pw == "" || strings.ContainsAny(pw, "\r\n") {
		return nil, fmt.Errorf("the password of %s is empty or spans lines", name)
	}
	st, err := atomicfile.Stage(s.PasswordPath(name), []byte(pw+"\n"), 0o600)
	if err != nil {
		return nil, fmt.Errorf("stage the password of %s: %w", name, err)
	}
	return st, nil
}

// ErrInvalidSSHKey is wrapped by [LoadSSHKeys] errors about a file that
// does not hold public keys.
var ErrInvalidSSHKey = errors.New("invalid SSH public key")

// DefaultSSHKeyFiles returns those of home/.ssh/id_ed25519.pub and
// home/.ssh/id_rsa.pub that exist, in that order.
func DefaultSSHKeyFiles(home string) []string {
	var out []string
	for _, n := range []string{"id_ed25519.pub", "id_rsa.pub"} {
		p := filepath.Join(home, ".ssh", n)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

// maxKeyFileSize bounds a public key file; real ones are a few KiB.
const maxKeyFileSize = 1 << 20

// LoadSSHKeys reads OpenSSH public key files (the .pub files or an
// authorized_keys without options) and returns their keys, one per line
// that is neither blank nor a '#' comment, trimmed, in file order and
// without repeats. Each key must be "TYPE BASE64 [comment]" where TYPE is
// ssh-ed25519, ssh-rsa, ecdsa-sha2-*, or sk-* and the base64 blob starts
// with that type. Errors wrap [ErrInvalidSSHKey] and name the file and
// line, but never quote it: a private key given by mistake must not end
// up in a log. A file without any key is an error too.
func LoadSSHKeys(files []string) ([]string, error) {
	var keys []string
	for _, f := range files {
		data, err := readSmall(f, maxKeyFileSize)
		if err != nil {
			return nil, fmt.Errorf("read SSH keys %s: %w", f, err)
		}
		n := 0
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), maxKeyFileSize)
		for line := 1; sc.Scan(); line++ {
			t := strings.TrimSpace(sc.Text())
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			if err := checkPublicKey(t); err != nil {
				return nil, fmt.Errorf("read SSH keys %s line %d: %w", f, line, err)
			}
			n++
			if !slices.Contains(keys, t) {
				keys = append(keys, t)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read SSH keys %s: %w", f, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("read SSH keys %s: %w: no key in the file", f, ErrInvalidSSHKey)
		}
	}
	return keys, nil
}

func readSmall(path string, limit int64) ([]byte, error) {
	data, err := regularfile.Read(path, limit)
	if errors.Is(err, regularfile.ErrTooLarge) {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrInvalidSSHKey, limit)
	}
	return data, err
}

func checkPublicKey(line string) error {
	if strings.Contains(line, "PRIVATE KEY") {
		return fmt.Errorf("%w: this is a private key; give the .pub file", ErrInvalidSSHKey)
	}
	const want = "want TYPE BASE64 [comment] with TYPE ssh-ed25519, ssh-rsa, ecdsa-sha2-* or sk-*"
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return fmt.Errorf("%w: %s", ErrInvalidSSHKey, want)
	}
	typ := fields[0]
	if typ != "ssh-ed25519" && typ != "ssh-rsa" && !strings.HasPrefix(typ, "ecdsa-sha2-") && !strings.HasPrefix(typ, "sk-") {
		return fmt.Errorf("%w: key type is not one of ssh-ed25519, ssh-rsa, ecdsa-sha2-*, sk-* (options before the key are not supported); %s", ErrInvalidSSHKey, want)
	}
	blob, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		return fmt.Errorf("%w: the key is not base64; %s", ErrInvalidSSHKey, want)
	}
	// The blob starts with the type as an SSH string: uint32 length, bytes.
	if len(blob) < 4 {
		return fmt.Errorf("%w: the key blob is truncated", ErrInvalidSSHKey)
	}
	n := binary.BigEndian.Uint32(blob)
	if uint64(n) > uint64(len(blob)-4) || string(blob[4:4+n]) != typ {
		return fmt.Errorf("%w: the key blob does not start with its type %s", ErrInvalidSSHKey, typ)
	}
	return nil
}
