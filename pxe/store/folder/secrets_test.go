package folder

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/secret"
)

// TAPPaaS TestWriteNodeSecret.test_secret_file_is_0600
func TestWritePassword(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secrets")
	s, err := OpenSecrets(dir)
	if err != nil {
		t.Fatal(err)
	}
	path, err := s.WritePassword("tappaas3", "pw")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "tappaas3.pw"); path != want || s.PasswordPath("tappaas3") != want {
		t.Errorf("path = %q, want %q", path, want)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "pw\n" {
		t.Errorf("content = %q, want %q", data, "pw\n")
	}
	assertMode(t, path, 0o600)
	assertMode(t, dir, 0o700)

	// Writing again replaces it.
	if _, err := s.WritePassword("tappaas3", "second"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "second\n" {
		t.Errorf("content after rewrite = %q", data)
	}
	assertMode(t, path, 0o600)
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s has mode %v, want %v", path, got, want)
	}
}

func TestOpenSecretStoreTightensALooseFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secrets")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // past the umask
		t.Fatal(err)
	}
	if _, err := OpenSecrets(dir); err != nil {
		t.Fatal(err)
	}
	assertMode(t, dir, 0o700)
}

func TestOpenSecretStoreRefusesAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "secrets")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSecrets(f); err == nil {
		t.Errorf("OpenSecretStore on a file succeeded")
	}
}

func TestWritePasswordRefuses(t *testing.T) {
	s, err := OpenSecrets(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		name, pw string
		wantErr  error
	}{
		"a name with a slash":      {name: "../etc", pw: "secret-pw", wantErr: secret.ErrInvalidName},
		"an empty password":        {name: "tappaas3", pw: ""},
		"a password with newlines": {name: "tappaas3", pw: "secret\npw"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := s.WritePassword(tc.name, tc.pw)
			if err == nil {
				t.Fatal("WritePassword succeeded")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error = %v, want %v", err, tc.wantErr)
			}
			if tc.pw != "" && strings.Contains(err.Error(), tc.pw) {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}
