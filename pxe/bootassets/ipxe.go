package bootassets

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
)

// maxStaged bounds the size of one staged iPXE binary (they are about a
// megabyte); a larger file is refused rather than read into memory.
const maxStaged = 64 << 20

// StageIPXE copies iPXE binaries named names from srcDir into root, which
// it creates (mode 0755) if needed. Symlinks in srcDir are followed
// (Debian's /usr/lib/ipxe/ipxe.efi links to /boot/ipxe.efi); each copy is
// a regular file of mode 0644 written atomically, so a running TFTP server
// never serves half a binary. Names must be plain file names.
//
// Names missing from srcDir are skipped and the others still copied; the
// error returned then matches [fs.ErrNotExist] and names each missing
// file, so a caller can treat optional binaries (arm64) as a warning.
func StageIPXE(srcDir, root string, names []string) error {
	for _, n := range names {
		if !plainName(n) {
			return fmt.Errorf("stage iPXE: binary name %q: want a plain file name such as %q", n, "ipxe.efi")
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("stage iPXE: create TFTP root: %w", err)
	}
	var missing []error
	for _, n := range names {
		err := stageOne(filepath.Join(srcDir, n), filepath.Join(root, n))
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, err)
			continue
		}
		if err != nil {
			return err
		}
	}
	return errors.Join(missing...)
}

// plainName reports whether n names a file of a folder, no path.
func plainName(n string) bool {
	return n != "" && n != "." && n != ".." && len(n) <= 255 && !strings.ContainsAny(n, "/\\\x00")
}

func stageOne(src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("stage iPXE binary %s: %w", src, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stage iPXE binary %s: %w", src, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("stage iPXE binary %s: not a regular file", src)
	}
	if fi.Size() > maxStaged {
		return fmt.Errorf("stage iPXE binary %s: %d bytes, want at most %d", src, fi.Size(), maxStaged)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStaged+1))
	if err != nil {
		return fmt.Errorf("stage iPXE binary %s: %w", src, err)
	}
	if len(data) > maxStaged {
		return fmt.Errorf("stage iPXE binary %s: over %d bytes", src, maxStaged)
	}
	if err := atomicfile.WriteFile(dst, data, 0o644); err != nil {
		return fmt.Errorf("stage iPXE binary %s: %w", src, err)
	}
	return nil
}
