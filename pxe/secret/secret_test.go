package secret

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
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

func TestValidateName(t *testing.T) {
	for name, want := range map[string]bool{
		"node-1":                true,
		"A_b-9":                 true,
		strings.Repeat("a", 63): true,
		"":                      false,
		strings.Repeat("a", 64): false,
		"../etc":                false,
		"a b":                   false,
		"a.b":                   false,
		"nöde":                  false,
	} {
		err := ValidateName(name)
		if ok := err == nil; ok != want {
			t.Errorf("ValidateName(%q) = %v, want ok %v", name, err, want)
		}
		if err != nil && !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateName(%q) = %v, want ErrInvalidName", name, err)
		}
	}
}
