package bootassets

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStageIPXE(t *testing.T) {
	src := t.TempDir()
	boot := t.TempDir()
	// Debian's layout: /usr/lib/ipxe/ipxe.efi is a symlink to /boot/ipxe.efi.
	if err := os.WriteFile(filepath.Join(boot, "ipxe.efi"), []byte("EFI binary"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(boot, "ipxe.efi"), filepath.Join(src, "ipxe.efi")); err != nil {
		t.Fatal(err)
	}
	for n, b := range map[string]string{"undionly.kpxe": "BIOS binary", "snponly.efi": "SNP binary"} {
		if err := os.WriteFile(filepath.Join(src, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(t.TempDir(), "tftp")
	// An old copy is replaced.
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "undionly.kpxe"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}

	err := StageIPXE(src, root, []string{"undionly.kpxe", "ipxe.efi", "snponly.efi", "ipxe-arm64.efi"})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "ipxe-arm64.efi") {
		t.Fatalf("StageIPXE = %v, want fs.ErrNotExist naming the missing arm64 binary", err)
	}
	want := map[string]string{"undionly.kpxe": "BIOS binary", "ipxe.efi": "EFI binary", "snponly.efi": "SNP binary"}
	got := map[string]string{}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, err := os.Lstat(filepath.Join(root, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want a regular file of mode 0644 (symlinks followed)", e.Name(), fi.Mode())
		}
		b, _ := os.ReadFile(filepath.Join(root, e.Name()))
		got[e.Name()] = string(b)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TFTP root (-want +got):\n%s", diff)
	}
}

func TestStageIPXERefuses(t *testing.T) {
	src := t.TempDir()
	if err := os.Mkdir(filepath.Join(src, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		names []string
		want  string
	}{
		"a name with a folder is refused": {[]string{"../etc/passwd"}, `binary name "../etc/passwd": want a plain file name`},
		"an empty name is refused":        {[]string{""}, `binary name "": want a plain file name`},
		"a folder is not a binary":        {[]string{"adir"}, "not a regular file"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "tftp")
			err := StageIPXE(src, root, tc.names)
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("StageIPXE = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// With Debian's ipxe package installed, its binaries stage and serve.
func TestStageIPXEFromDebianPackage(t *testing.T) {
	const debian = "/usr/lib/ipxe"
	if _, err := os.Stat(filepath.Join(debian, "ipxe.efi")); err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatalf("Debian's ipxe package is not installed (%v)", err)
		}
		t.Skipf("Debian's ipxe package is not installed (%v)", err)
	}
	root := t.TempDir()
	if err := StageIPXE(debian, root, []string{"undionly.kpxe", "ipxe.efi", "snponly.efi"}); err != nil {
		t.Fatalf("StageIPXE: %v", err)
	}
	for _, n := range []string{"undionly.kpxe", "ipxe.efi", "snponly.efi"} {
		want, err := os.ReadFile(filepath.Join(debian, n))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, n))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: staged copy differs from the package's (%v)", n, err)
		}
	}
}
