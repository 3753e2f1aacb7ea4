package bootassets

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/sbchain"
)

// TestReadPieceRefusesWhatIsNotAPiece: a chain folder's piece is read
// only from a regular file within maxChainFile; a FIFO (which would hang
// a plain open), a device, a folder or an oversized file under a piece's
// name is a PieceError naming the piece, at once, not passed over for the
// piece's next name; a missing piece names the names looked for.
func TestReadPieceRefusesWhatIsNotAPiece(t *testing.T) {
	tests := map[string]struct {
		asset   string
		setup   func(t *testing.T, path string)
		want    []byte
		piece   string // the PieceError's piece, if one is wanted
		wantErr string
	}{
		"a regular file is read": {
			asset: AssetShim, setup: func(t *testing.T, p string) { write(t, p, "MZ shim") }, want: []byte("MZ shim"),
		},
		"a FIFO is refused without waiting for a writer": {
			asset: AssetGrub, setup: func(t *testing.T, p string) {
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
			}, piece: sbchain.PieceGrub, wantErr: "grub: not a regular file",
		},
		"a device is refused": {
			asset: AssetShim, setup: func(t *testing.T, p string) {
				if err := os.Symlink("/dev/zero", p); err != nil {
					t.Fatal(err)
				}
			}, piece: sbchain.PieceShim, wantErr: "shim: not a regular file",
		},
		"a folder is refused": {
			asset: AssetGrub, setup: func(t *testing.T, p string) {
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
			}, piece: sbchain.PieceGrub, wantErr: "grub: not a regular file",
		},
		"an oversized file is refused": {
			asset: AssetGrub, setup: func(t *testing.T, p string) {
				f, err := os.Create(p)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := f.Truncate(maxChainFile + 1); err != nil { // sparse
					t.Fatal(err)
				}
			}, piece: sbchain.PieceGrub, wantErr: "grub: over 64 MiB",
		},
		"a missing piece names the names looked for": {
			asset: AssetGrub, setup: func(*testing.T, string) {}, wantErr: "no grub there (want one of grubx64.efi, grubnetx64.efi.signed)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, filepath.Join(dir, tc.asset))
			// A good piece under the next name must not be taken instead.
			if names := chainFolderNames[tc.asset]; tc.piece != "" {
				write(t, filepath.Join(dir, names[1]), "MZ next")
			}
			type result struct {
				b   []byte
				err error
			}
			done := make(chan result, 1)
			go func() { b, err := readPiece(dir, tc.asset); done <- result{b, err} }()
			var r result
			select {
			case r = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("readPiece hangs")
			}
			if tc.wantErr == "" {
				if r.err != nil {
					t.Fatal(r.err)
				}
				if diff := cmp.Diff(tc.want, r.b); diff != "" {
					t.Errorf("read (-want +got):\n%s", diff)
				}
				return
			}
			if r.err == nil || !strings.Contains(r.err.Error(), tc.wantErr) {
				t.Fatalf("readPiece: %v; want an error containing %q", r.err, tc.wantErr)
			}
			var pe *sbchain.PieceError
			if tc.piece != "" && (!errors.As(r.err, &pe) || pe.Piece != tc.piece) {
				t.Errorf("readPiece: %v; want a PieceError naming the %s", r.err, tc.piece)
			}
			if tc.piece == "" && !errors.Is(r.err, fs.ErrNotExist) {
				t.Errorf("readPiece: %v; want fs.ErrNotExist", r.err)
			}
		})
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
