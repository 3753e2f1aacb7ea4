package secret

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/plasmactl/plasma-node/internal/regularfile"
)

// ErrInvalidPassword: a password that is empty or spans lines, or a BMC
// password that is missing or that group or others may read.
var ErrInvalidPassword = errors.New("invalid password")

// ErrInvalidName: a name that is not a registration's (1 to 63 letters,
// digits, '-' or '_'), so no file name of the folder.
var ErrInvalidName = errors.New("invalid name")

// ValidateName checks that name can name a secret: 1 to 63 letters,
// digits, '-' or '_'. Otherwise the error wraps [ErrInvalidName].
func ValidateName(name string) error {
	bad := func(c rune) bool {
		return !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_')
	}
	if len(name) < 1 || len(name) > 63 || strings.ContainsFunc(name, bad) {
		return fmt.Errorf("%w %q (1 to 63 letters, digits, '-' or '_')", ErrInvalidName, name)
	}
	return nil
}

// invalidError says what is wrong in its own words and matches
// [ErrInvalidPassword].
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }
func (e *invalidError) Unwrap() error { return ErrInvalidPassword }

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

// defaultDirName is the secrets folder's name in the home folder.
const defaultDirName = ".node-secrets"

// DefaultDir returns ~/.node-secrets, TAPPaaS's place for node
// passwords.
func DefaultDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("default secrets folder: %w", err)
	}
	return filepath.Join(home, defaultDirName), nil
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

// Previous is a [Store] that keeps a node's previous root password
// while the node reinstalls: its new answer's password replaces the
// current one when it is consumed, and until the new install reports in
// the machine may still be the old one.
type Previous interface {
	// KeepPrevious keeps name's current root password as its previous
	// one; without a current one it does nothing.
	KeepPrevious(ctx context.Context, name string) error
	// ForgetPrevious removes name's previous root password, if any.
	ForgetPrevious(ctx context.Context, name string) error
}
