package folder

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/secret"
)

func TestBMCPasswordStore(t *testing.T) {
	ctx := t.Context()
	s, err := OpenSecrets(filepath.Join(t.TempDir(), "secrets"))
	if err != nil {
		t.Fatal(err)
	}
	path, err := s.WriteBMCPassword(ctx, "pve1", "hunter2-bmc")
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || filepath.Base(path) != "pve1.bmc.pw" {
		t.Fatalf("%s: %v %v", path, fi.Mode(), err)
	}
	if pw, err := s.ReadBMCPassword(ctx, "pve1"); err != nil || pw != "hunter2-bmc" {
		t.Errorf("read back %q %v", pw, err)
	}
	os.Chmod(path, 0o644)
	if _, err := s.ReadBMCPassword(ctx, "pve1"); !errors.Is(err, secret.ErrInvalidPassword) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a 0644 password file: %v", err)
	}
	if _, err := s.ReadBMCPassword(ctx, "pve2"); !errors.Is(err, secret.ErrInvalidPassword) {
		t.Errorf("no password file: %v", err)
	}
	if _, err := s.WriteBMCPassword(ctx, "pve1", "two\nlines"); !errors.Is(err, secret.ErrInvalidPassword) || strings.Contains(err.Error(), "two") {
		t.Errorf("a password over two lines: %v", err)
	}
	f := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(f, []byte("from-file\nignored\n"), 0o600)
	if pw, err := secret.ReadBMCPasswordFile(f); err != nil || pw != "from-file" {
		t.Errorf("password file: %q %v", pw, err)
	}
}
