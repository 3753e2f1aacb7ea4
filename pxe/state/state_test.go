package state

import (
	"errors"
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
		{setting: "postgres://db.example/np", wantErr: ErrNotBuilt, errHas: "postgres://"},
		{setting: "PostgreSQL://db.example/np", wantErr: ErrNotBuilt, errHas: "postgresql://"},
		{setting: "s3://bucket/np", wantErr: ErrUnknownScheme, errHas: `"s3"`},
		{setting: "file://relative/path", errHas: "absolute path"},
		{setting: "", errHas: "no state folder"},
	}
	for _, tc := range tests {
		s, err := Open(tc.setting, Options{SecretsDir: filepath.Join(dir, "secrets")})
		if tc.wantDir != "" {
			if err != nil {
				t.Errorf("Open(%q): %v", tc.setting, err)
				continue
			}
			if s.Dir() != tc.wantDir || s.Registrations() == nil {
				t.Errorf("Open(%q): dir %q, want %q", tc.setting, s.Dir(), tc.wantDir)
			}
			if _, err := s.Secrets(); err != nil {
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
