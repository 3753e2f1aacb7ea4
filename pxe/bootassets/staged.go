package bootassets

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// stagedNameRE is what a release folder may be called to be listed by
// [StagedReleases]: the names an asset URL may carry.
var stagedNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$`)

// StagedReleases lists the releases of <stateDir>/assets/ whose folder
// holds both [AssetKernel] and [AssetNetbootInitrd] as regular files,
// sorted: the releases a machine can boot. It reads no manifest (see
// [ListReleases] for that). A missing assets folder gives none and no
// error.
func StagedReleases(ctx context.Context, stateDir string) ([]string, error) {
	return StagedIn(ctx, filepath.Join(stateDir, AssetsDir))
}

// StagedIn is [StagedReleases] of an assets folder dir, wherever it is.
func StagedIn(ctx context.Context, dir string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list releases: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list releases in %s: %w", dir, err)
	}
	defer root.Close()
	ents, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, fmt.Errorf("list releases in %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		if stagedNameRE.MatchString(e.Name()) && Staged(root, e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Staged reports whether the folder release of assets, an assets folder
// (<state-dir>/assets) opened with [os.OpenRoot], holds both
// [AssetKernel] and [AssetNetbootInitrd] as regular files. Symlinks that
// leave assets count as missing.
func Staged(assets *os.Root, release string) bool {
	for _, f := range []string{AssetKernel, AssetNetbootInitrd} {
		fi, err := assets.Stat(release + "/" + f)
		if err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}
