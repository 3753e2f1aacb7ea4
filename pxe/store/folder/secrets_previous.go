package folder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

var _ secret.Previous = (*Secrets)(nil)

// maxPassword bounds a root password file read back.
const maxPassword = 4 << 10

// PreviousPath returns where node name's previous root password is kept
// while it reinstalls (<name>.previous.pw; a node name holds no dot).
func (s *Secrets) PreviousPath(name string) string {
	return s.PasswordPath(name + ".previous")
}

// KeepPrevious copies name's root password to [Secrets.PreviousPath]
// (0600, atomically, replacing an older one); without one it does
// nothing. No error includes the password.
func (s *Secrets) KeepPrevious(_ context.Context, name string) error {
	if err := secret.ValidateName(name); err != nil {
		return err
	}
	data, err := regularfile.Read(s.PasswordPath(name), maxPassword)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("keep the previous password of %s: %w", name, err)
	}
	if err := atomicfile.WriteFile(s.PreviousPath(name), data, 0o600); err != nil {
		return fmt.Errorf("keep the previous password of %s: %w", name, err)
	}
	return nil
}

// ForgetPrevious removes name's previous root password, if any.
func (s *Secrets) ForgetPrevious(_ context.Context, name string) error {
	if err := secret.ValidateName(name); err != nil {
		return err
	}
	if err := os.Remove(s.PreviousPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("forget the previous password of %s: %w", name, err)
	}
	return nil
}
