package bootassets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
)

// copyAsset copies exactly size bytes of r into a new file at path and
// returns its [Asset].
func copyAsset(ctx context.Context, path string, r io.Reader, size int64, counter *progressCounter) (Asset, error) {
	return writeAssetFunc(path, func(w io.Writer) error {
		n, err := copyCtx(ctx, w, io.LimitReader(r, size))
		if err == nil && n != size {
			err = fmt.Errorf("got %d of %d bytes: %w", n, size, io.ErrUnexpectedEOF)
		}
		return err
	}, counter)
}

// writeAssetFunc creates path (0644), lets fill write it, syncs it and
// returns its size and checksum. counter, when not nil, sees every byte
// and is finished.
func writeAssetFunc(path string, fill func(io.Writer) error, counter *progressCounter) (Asset, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return Asset{}, err
	}
	h := sha256.New()
	cw := &countWriter{}
	ws := []io.Writer{f, h, cw}
	if counter != nil {
		ws = append(ws, counter)
	}
	err = fill(io.MultiWriter(ws...))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	counter.finish()
	if err != nil {
		return Asset{}, fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return Asset{Name: filepath.Base(path), Size: cw.n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

// copyCtx copies r to w in 1 MiB chunks until EOF or ctx ends.
func copyCtx(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	return io.CopyBuffer(w, ctxReader{ctx, r}, make([]byte, 1<<20))
}

// cleanStale removes folders a killed prepare left behind. The caller
// holds the assets lock.
func cleanStale(assets string, log *slog.Logger) {
	ents, err := os.ReadDir(assets)
	if err != nil {
		return
	}
	for _, e := range ents {
		if atomicfile.IsTemp(e.Name()) {
			p := filepath.Join(assets, e.Name())
			if err := os.RemoveAll(p); err != nil {
				log.Warn("cannot remove a stale prepare folder", "dir", p, "err", err)
			}
		}
	}
}

// swapDir puts the folder tmp in place of final, replacing a folder
// already there. Between the two renames final is briefly missing.
func swapDir(tmp, final string) error {
	parent := filepath.Dir(final)
	if err := atomicfile.SyncDir(tmp); err != nil {
		return err
	}
	old := ""
	if _, err := os.Lstat(final); err == nil {
		o, err := os.MkdirTemp(parent, atomicfile.TempPrefix+"old-"+filepath.Base(final)+"-")
		if err != nil {
			return err
		}
		if err := os.Remove(o); err != nil {
			return err
		}
		if err := os.Rename(final, o); err != nil {
			return err
		}
		old = o
	}
	if err := os.Rename(tmp, final); err != nil {
		if old != "" {
			_ = os.Rename(old, final)
		}
		return err
	}
	if err := atomicfile.SyncDir(parent); err != nil {
		return err
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}
