package secret

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
)

// ErrInvalidPassword: a password that is empty or spans lines, or a BMC
// password that is missing or that group or others may read.
var ErrInvalidPassword = errors.New("invalid password")

// ErrInvalidName: a name that is not a registration's (1 to 63 letters,
// digits, '-' or '_'), so no file name of the folder.
var ErrInvalidName = errors.New("invalid name")

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,63}$`)

func validName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w %q (1 to 63 letters, digits, '-' or '_')", ErrInvalidName, name)
	}
	return nil
}

// invalidError says what is wrong in its own words and matches
// [ErrInvalidPassword].
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }
func (e *invalidError) Unwrap() error { return ErrInvalidPassword }

// missingError is a password that is not kept: it matches both
// [ErrInvalidPassword] and fs.ErrNotExist.
type missingError struct{ msg string }

func (e *missingError) Error() string   { return e.msg }
func (e *missingError) Unwrap() []error { return []error{ErrInvalidPassword, fs.ErrNotExist} }

func invalidf(format string, args ...any) error {
	return &invalidError{fmt.Sprintf(format, args...)}
}

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

// DefaultDirName is the secrets folder's name in the home folder.
const DefaultDirName = ".node-secrets"

// DefaultDir returns ~/.node-secrets, TAPPaaS's place for node
// passwords.
func DefaultDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("default secrets folder: %w", err)
	}
	return filepath.Join(home, DefaultDirName), nil
}

// Folder is the folder that keeps each node's generated root
// password in <name>.pw (mode 0600, folder 0700). It never logs a secret.
type Folder struct {
	dir string
}

// Open opens dir, creating it with mode 0700, and tightens its
// mode to 0700 when it is looser (group or others have any access).
func Open(dir string) (*Folder, error) {
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
	return &Folder{dir: dir}, nil
}

// Dir returns the secrets folder.
func (s *Folder) Dir() string { return s.dir }

// PasswordPath returns where the password of node name is kept.
func (s *Folder) PasswordPath(name string) string {
	return filepath.Join(s.dir, name+".pw")
}

// WritePassword writes pw and a newline to <dir>/<name>.pw with mode 0600,
// atomically, replacing an older one, and returns the path. A bad name
// gives an error wrapping [ErrInvalidName]. No error includes pw.
func (s *Folder) WritePassword(name, pw string) (path string, err error) {
	if err := validName(name); err != nil {
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
func (s *Folder) StageRootPassword(name, pw string) (Staged, error) {
	if err := validName(name); err != nil {
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

// maxBMCPassword bounds a BMC password file; IPMI allows 20 bytes,
// Redfish services a few hundred.
const maxBMCPassword = 4 << 10

// ReadBMCPasswordFile reads a BMC password from a regular file: its
// first line, without the newline. The error names the file but never
// quotes it, and wraps [ErrInvalidPassword] for an empty password.
func ReadBMCPasswordFile(path string) (string, error) {
	data, err := regularfile.Read(path, maxBMCPassword)
	if err != nil {
		return "", fmt.Errorf("read BMC password %s: %w", path, err)
	}
	pw, _, _ := strings.Cut(string(data), "\n")
	pw = strings.TrimSuffix(pw, "\r")
	if pw == "" {
		return "", invalidf("read BMC password %s: the first line is empty", path)
	}
	return pw, nil
}

// BMCPasswordPath returns where the BMC password of node name is kept.
func (s *Folder) BMCPasswordPath(name string) string {
	return s.PasswordPath(name + ".bmc")
}

// WriteBMCPassword writes node name's BMC password to
// <dir>/<name>.bmc.pw with mode 0600, atomically, and returns the path.
// No error includes pw.
func (s *Folder) WriteBMCPassword(name, pw string) (string, error) {
	if err := validName(name); err != nil {
		return "", err
	}
	if pw == "" || strings.ContainsAny(pw, "\r\n") {
		return "", invalidf("write BMC password of %s: the password is empty or spans lines", name)
	}
	path := s.BMCPasswordPath(name)
	if err := atomicfile.WriteFile(path, []byte(pw+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write BMC password of %s: %w", name, err)
	}
	return path, nil
}

// ReadBMCPassword returns node name's BMC password. A file that group
// or others may read is refused, as is a missing one (an error wrapping
// both [ErrInvalidPassword] and fs.ErrNotExist).
func (s *Folder) ReadBMCPassword(name string) (string, error) {
	if err := validName(name); err != nil {
		return "", err
	}
	path := s.BMCPasswordPath(name)
	f, err := regularfile.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", &missingError{fmt.Sprintf("BMC password of %s: %v: no %s (register the node again with its BMC password)", name, ErrInvalidPassword, path)}
		}
		return "", fmt.Errorf("BMC password of %s: %w", name, err)
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return "", fmt.Errorf("BMC password of %s: %w", name, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("BMC password of %s: %w: %s has mode %v; want 0600", name, ErrInvalidPassword, path, fi.Mode().Perm())
	}
	return ReadBMCPasswordFile(path)
}

// RemoveBMCPassword removes node name's BMC password file; a missing one
// is no error.
func (s *Folder) RemoveBMCPassword(name string) error {
	if err := validName(name); err != nil {
		return err
	}
	if err := os.Remove(s.BMCPasswordPath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove BMC password of %s: %w", name, err)
	}
	return nil
}

// Staged is a secret written under a temporary name: Commit puts it in
// place, Discard drops it.
type Staged interface {
	Commit() error
	Discard()
}

// Store is the store of the nodes' secrets: the root password each
// answer generates and the BMC passwords. [*Folder] is the secrets
// folder's implementation. Names are registration names.
type Store interface {
	// StageRootPassword stages name's root password, to be committed
	// once its registration is consumed (and discarded if it is not).
	StageRootPassword(name, password string) (Staged, error)
	// WriteBMCPassword keeps name's BMC password and says where (for
	// the folder, its file), for messages.
	WriteBMCPassword(name, password string) (where string, err error)
	// ReadBMCPassword returns name's BMC password, an error wrapping
	// fs.ErrNotExist when none is kept.
	ReadBMCPassword(name string) (string, error)
	// RemoveBMCPassword removes name's BMC password, if any.
	RemoveBMCPassword(name string) error
}

var _ Store = (*Folder)(nil)
