package folder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// SiteSecretsDir is the site secrets' folder in the state folder.
const SiteSecretsDir = "site-secrets"

// siteSecretExt ends a site secret's file name.
const siteSecretExt = ".secret"

// SiteSecrets is the state folder's store of the site's named secrets
// ([secret.Site]): <state-dir>/site-secrets/<name>.secret, each mode 0600
// in a 0700 folder, written atomically. A file that group or others may
// read is refused. Safe for concurrent use; it never logs a value.
type SiteSecrets struct {
	dir string
}

var _ secret.Site = (*SiteSecrets)(nil)

// OpenSiteSecrets returns the site secrets of the state folder dir. It
// does no I/O; the folder is made (0700) on the first set.
func OpenSiteSecrets(dir string) *SiteSecrets {
	return &SiteSecrets{dir: filepath.Join(dir, SiteSecretsDir)}
}

// Dir returns the site secrets' folder.
func (s *SiteSecrets) Dir() string { return s.dir }

func (s *SiteSecrets) path(name string) string { return filepath.Join(s.dir, name+siteSecretExt) }

// SetSiteSecret keeps value in <name>.secret (0600), replacing an older
// one atomically; the folder is made 0700, and tightened to 0700 when
// looser.
func (s *SiteSecrets) SetSiteSecret(_ context.Context, name, value string) error {
	if err := secret.ValidateSiteName(name); err != nil {
		return err
	}
	if err := secret.CheckSiteValue(name, value); err != nil {
		return err
	}
	if _, err := OpenSecrets(s.dir); err != nil {
		return fmt.Errorf("set site secret %s: %w", name, err)
	}
	if err := atomicfile.WriteFile(s.path(name), []byte(value+"\n"), 0o600); err != nil {
		return fmt.Errorf("set site secret %s: %w", name, err)
	}
	return nil
}

// ReadSiteSecret returns the secret name; a missing one wraps
// [secret.ErrNoSiteSecret], one that group or others may read (file or
// folder) is refused with [secret.ErrInvalidPassword].
func (s *SiteSecrets) ReadSiteSecret(_ context.Context, name string) (string, error) {
	if err := secret.ValidateSiteName(name); err != nil {
		return "", err
	}
	path := s.path(name)
	for _, p := range []string{s.dir, path} {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("site secret %s: %w (set it with secret set %s)", name, secret.ErrNoSiteSecret, name)
		}
		if err != nil {
			return "", fmt.Errorf("site secret %s: %w", name, err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			want := fs.FileMode(0o600)
			if p == s.dir {
				want = 0o700
			}
			return "", fmt.Errorf("site secret %s: %w: %s has mode %v; want %v", name, secret.ErrInvalidPassword, p, fi.Mode().Perm(), want)
		}
	}
	data, err := regularfile.Read(path, secret.MaxSiteSecret+2)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("site secret %s: %w", name, secret.ErrNoSiteSecret)
	}
	if err != nil {
		return "", fmt.Errorf("site secret %s: %w", name, err)
	}
	return secret.SiteValue(name, data)
}

// SiteSecretNames returns the names of the secrets kept, sorted; none
// when the folder is missing.
func (s *SiteSecrets) SiteSecretNames(context.Context) ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("site secrets: %w", err)
	}
	var names []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), siteSecretExt)
		if !ok || !e.Type().IsRegular() || atomicfile.IsTemp(e.Name()) || secret.ValidateSiteName(name) != nil {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// RemoveSiteSecret removes <name>.secret; a missing one wraps
// [secret.ErrNoSiteSecret].
func (s *SiteSecrets) RemoveSiteSecret(_ context.Context, name string) error {
	if err := secret.ValidateSiteName(name); err != nil {
		return err
	}
	err := os.Remove(s.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove site secret %s: %w", name, secret.ErrNoSiteSecret)
	}
	if err != nil {
		return fmt.Errorf("remove site secret %s: %w", name, err)
	}
	return atomicfile.SyncDir(s.dir)
}
