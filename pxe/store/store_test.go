package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenDispatchesTheScheme(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		setting string
		wantErr error
		wantDir string
		errHas  string
	}{
		{setting: filepath.Join(dir, "a"), wantDir: filepath.Join(dir, "a")},
		{setting: "file://" + filepath.Join(dir, "b"), wantDir: filepath.Join(dir, "b")},
		{setting: "postgres://db.example/np", wantErr: ErrNotAFolder, errHas: "postgres://"},
		{setting: "PostgreSQL://db.example/np", wantErr: ErrNotAFolder, errHas: "postgresql://"},
		{setting: "s3://bucket/np", wantErr: ErrUnknownScheme, errHas: `"s3"`},
		{setting: "file://relative/path", errHas: "absolute path"},
		{setting: "", errHas: "no state folder"},
	}
	for _, tc := range tests {
		s, err := Open(t.Context(), tc.setting, Options{SecretsDir: filepath.Join(dir, "secrets")})
		if tc.wantDir != "" {
			if err != nil {
				t.Errorf("Open(%q): %v", tc.setting, err)
				continue
			}
			if s.Dir() != tc.wantDir || s.Registrations() == nil {
				t.Errorf("Open(%q): dir %q, want %q", tc.setting, s.Dir(), tc.wantDir)
			}
			if _, err := s.Secrets(t.Context()); err != nil {
				t.Errorf("Open(%q).Secrets: %v", tc.setting, err)
			}
			if _, err := s.Tokens(); err != nil {
				t.Errorf("Open(%q).Tokens: %v", tc.setting, err)
			}
			if _, err := s.Discovered(); err != nil {
				t.Errorf("Open(%q).Discovered: %v", tc.setting, err)
			}
			continue
		}
		if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("Open(%q) = %v, want an error matching %v naming %s", tc.setting, err, tc.wantErr, tc.errHas)
		}
	}
}

func TestExistsAndEventsCreateNothing(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		setting string
		want    bool
		errHas  string
	}{
		{setting: missing},
		{setting: "file://" + missing},
		{setting: dir},
		{setting: file, errHas: "not a folder"},
		{setting: "postgres://db.example/np", errHas: "postgres://"},
	} {
		got, err := Exists(tc.setting)
		if got != tc.want || (err == nil) != (tc.errHas == "") || (err != nil && !strings.Contains(err.Error(), tc.errHas)) {
			t.Errorf("Exists(%q) = %v, %v; want %v and an error naming %q", tc.setting, got, err, tc.want, tc.errHas)
		}
	}
	evs, err := Events(missing)
	if err != nil {
		t.Fatal(err)
	}
	if recs, err := evs.Read(t.Context(), "", 0); len(recs) != 0 || err != nil {
		t.Errorf("the events of a missing folder: %v, %v", recs, err)
	}
	if _, err := Events("postgres://db.example/np"); !errors.Is(err, ErrNotAFolder) {
		t.Errorf("Events of postgres:// = %v, want ErrNotAFolder", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Exists or Events created %s: %v", missing, err)
	}
	if _, err := Open(t.Context(), dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if ok, err := Exists(dir); !ok || err != nil {
		t.Errorf("Exists of an opened folder = %v, %v", ok, err)
	}
}

// TestOpenAStoreURLNeedsItsOpener: a store URL opens through the opener
// of its scheme that the program gives, and only then; without one it is
// refused naming the scheme and what this program opens, never the URL's
// password.
func TestOpenAStoreURLNeedsItsOpener(t *testing.T) {
	errOpened := errors.New("opened")
	var got string
	fake := func(_ context.Context, url string, _ RemoteOptions) (Remote, error) {
		got = url
		return nil, errOpened
	}
	const url = "postgres://np:s3cret@db.example/np"
	tests := map[string]struct {
		openers Openers
		wantErr error
		errHas  string
	}{
		"a program without openers keeps the folder only": {wantErr: ErrUnknownScheme, errHas: "state folder only"},
		"another scheme's opener lists what it opens":     {openers: Openers{"mysql": fake}, wantErr: ErrUnknownScheme, errHas: "mysql://"},
		"the scheme's opener is called with the URL":      {openers: Openers{"postgres": fake}, wantErr: errOpened},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got = ""
			_, err := Open(t.Context(), t.TempDir(), Options{Store: url, Openers: tc.openers})
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.errHas) || strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("Open = %v; want %v naming %q, without the password", err, tc.wantErr, tc.errHas)
			}
			if tc.wantErr == errOpened && got != url {
				t.Errorf("the opener got %q, want %q", got, url)
			}
		})
	}
}

// TestSiteSecretsLiveInTheStateFolder: the state folder's site secrets
// are its site-secrets/ files, 0600 in a 0700 folder.
func TestSiteSecretsLiveInTheStateFolder(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(t.Context(), dir, Options{SecretsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	site, err := s.SiteSecrets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := site.SetSiteSecret(t.Context(), "bmc-admin", "Pa55"); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{filepath.Join(dir, "site-secrets"): 0o700, filepath.Join(dir, "site-secrets", "bmc-admin.secret"): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %v", path, fi, err, want)
		}
	}
}
