package secret

import (
	"path/filepath"
	"regexp"
	"testing"
)

func TestGeneratePassword(t *testing.T) {
	urlSafe := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	seen := map[string]bool{}
	for range 200 {
		pw, err := GeneratePassword()
		if err != nil {
			t.Fatal(err)
		}
		if len(pw) < 24 {
			t.Fatalf("password of %d characters, want at least 24", len(pw))
		}
		if !urlSafe.MatchString(pw) {
			t.Fatalf("password has characters outside the URL-safe alphabet")
		}
		if seen[pw] {
			t.Fatalf("the same password twice")
		}
		seen[pw] = true
	}
}

func TestDefaultSecretsDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	got, err := DefaultDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".node-secrets"); got != want {
		t.Errorf("DefaultDir() = %q, want %q", got, want)
	}
}
