package folder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// invalidf is a refusal of a password: it matches
// [secret.ErrInvalidPassword].
func invalidf(format string, args ...any) error {
	return &invalidError{fmt.Sprintf(format, args...), secret.ErrInvalidPassword}
}

// missingError is a password that is not kept: it matches both
// [secret.ErrInvalidPassword] and fs.ErrNotExist.
type missingError struct{ msg string }

func (e *missingError) Error() string   { return e.msg }
func (e *missingError) Unwrap() []error { return []error{secret.ErrInvalidPassword, fs.ErrNotExist} }

// Secrets is the folder that keeps each node's generated root
// password in <name>.pw (mode 0600, folder 0700). It never logs a secret.
type Secrets struct {
	dir string
}

// OpenSecrets opens dir, creating it with mode 0700, and tightens its
// mode to 0700 when it is looser (group or others have any access).
func OpenSecrets(dir string) (*Secrets, error) {
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
	return &Secrets{dir: dir}, nil
}

// Dir returns the secrets folder.
func (s *Secrets) Dir() string { return s.dir }

// PasswordPath returns where the password of node name is kept.
func (s *Secrets) PasswordPath(name string) string {
	return filepath.Join(s.dir, name+".pw")
}

// WritePassword writes pw and a newline to <dir>/<name>.pw with mode 0600,
// atomically, replacing an older one, and returns the path. A bad name
// gives an error wrapping [secret.ErrInvalidName]. No error includes pw.
func (s *Secrets) WritePassword(name, pw string) (path string, err error) {
	if err := secret.ValidateName(name); err != nil {
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
func (s *Secrets) StageRootPassword(_ context.Context, name, pw string) (secret.Staged, error) {
	if err := secret.ValidateName(name); err != nil {
		return nil, err
	}
	if pw == "" || strings.ContainsAny(pw, "\r\n") {
		return nil, fmt.Errorf("the password of %s is empty or spans lines", name)
	}
	st, err := atomicfile.Stage(s.PasswordPath(name), []byte(pw+"\n"), 0o600)
	if err != nil {
		return nil, fmt.Errorf("stage the password of %s: %w", name, err)
	}
	return stagedFile{st}, nil
}

// stagedFile is a staged password file as a [secret.Staged].
type stagedFile struct{ *atomicfile.Staged }

func (st stagedFile) Commit(context.Context) error { return st.Staged.Commit() }

// BMCPasswordPath returns where the BMC password of node name is kept.
func (s *Secrets) BMCPasswordPath(name string) string {
	return s.PasswordPath(name + ".bmc")
}

// WriteBMCPassword writes node name's BMC password to
// <dir>/<name>.bmc.pw with mode 0600, atomically, and returns the path.
// No error includes pw.
func (s *Secrets) WriteBMCPassword(_ context.Context, name, pw string) (string, error) {
	if err := secret.ValidateName(name); err != nil {
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
// both [secret.ErrInvalidPassword] and fs.ErrNotExist).
func (s *Secrets) ReadBMCPassword(_ context.Context, name string) (string, error) {
	if err := secret.ValidateName(name); err != nil {
		return "", err
	}
	path := s.BMCPasswordPath(name)
	f, err := regularfile.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", &missingError{fmt.Sprintf("BMC password of %s: %v: no %s (register the node again with its BMC password)", name, secret.ErrInvalidPassword, path)}
		}
		return "", fmt.Errorf("BMC password of %s: %w", name, err)
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return "", fmt.Errorf("BMC password of %s: %w", name, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("BMC password of %s: %w: %s has mode %v; want 0600", name, secret.ErrInvalidPassword, path, fi.Mode().Perm())
	}
	return secret.ReadBMCPasswordFile(path)
}

// RemoveBMCPassword removes node name's BMC password file; a missing one
// is no error.
func (s *Secrets) RemoveBMCPassword(_ context.Context, name string) error {
	if err := secret.ValidateName(name); err != nil {
		return err
	}
	if err := os.Remove(s.BMCPasswordPath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove BMC password of %s: %w", name, err)
	}
	return nil
}

var _ secret.Store = (*Secrets)(nil)
