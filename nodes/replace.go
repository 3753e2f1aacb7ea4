package nodes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/plasmactl/plasma-node/internal/regularfile"
)

// checkReplaceable refuses, before a writer changes anything, a
// platform whose platform.yaml or a node file is not a regular file (a
// symbolic link, a FIFO, a folder): a rewrite would replace a link with
// a regular file and leave its target as it was. The error wraps
// [ErrNotRegularFile] and names every such file.
func (s *Store) checkReplaceable(platform string) error {
	var errs []error
	if err := regularfile.CheckReplaceable(s.platformPath(platform)); err != nil {
		errs = append(errs, err)
	}
	ents, err := os.ReadDir(s.nodesDir(platform))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("list nodes of %s: %w", platform, err)
	}
	for _, e := range ents {
		if e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), nodeExt) {
			continue
		}
		if err := regularfile.CheckReplaceable(filepath.Join(s.nodesDir(platform), e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("platform %s: %w: %w; replace it with a regular file (plasma-node writes its files by renaming a new one over them)", platform, ErrNotRegularFile, errors.Join(errs...))
}

// ErrNoPlatformsDir: the project folder has no platforms/ folder, so it
// is not a project (yet).
var ErrNoPlatformsDir = errors.New("no platforms folder")

// CheckPlatformsDir reports whether the project folder has its
// platforms/ folder: an error wrapping [ErrNoPlatformsDir] that names
// the folder when it does not.
func (s *Store) CheckPlatformsDir() error {
	dir := filepath.Join(s.dir, PlatformsDir)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w: %s is not a project folder, or has no platform yet", dir, ErrNoPlatformsDir, s.dir)
	case err != nil:
		return fmt.Errorf("%s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("%s: %w: it is not a folder", dir, ErrNoPlatformsDir)
	}
	return nil
}
