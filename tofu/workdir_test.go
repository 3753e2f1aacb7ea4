package tofu

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOpenWorkdir(t *testing.T) {
	project := t.TempDir()
	// An existing, too open folder is tightened.
	if err := os.MkdirAll(filepath.Join(project, ".plasma", "node", "prod"), 0o755); err != nil {
		t.Fatal(err)
	}
	wd, err := OpenWorkdir(project, "prod")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(project, ".plasma", "node", "prod"); wd.Dir() != want {
		t.Errorf("Dir() = %q, want %q", wd.Dir(), want)
	}
	fi, err := os.Stat(wd.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("mode = %v, want 0700", fi.Mode().Perm())
	}

	wd2, err := OpenWorkdir(project, "stage")
	if err != nil {
		t.Fatal(err)
	}
	fi, err = os.Stat(wd2.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("new folder mode = %v, want 0700", fi.Mode().Perm())
	}
}

func TestOpenWorkdirRefusesBadPlatformNames(t *testing.T) {
	for name, platform := range map[string]string{
		"empty":           "",
		"a path":          "../etc",
		"a dot":           ".",
		"upper case":      "Prod",
		"a leading dash":  "-prod",
		"an underscore":   "prod_1",
		"too long":        strings.Repeat("a", 64),
		"a trailing dash": "prod-",
	} {
		t.Run(name, func(t *testing.T) {
			project := t.TempDir()
			_, err := OpenWorkdir(project, platform)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("OpenWorkdir(%q) = %v, want ErrInvalid", platform, err)
			}
			if !strings.Contains(err.Error(), "RFC 1123") {
				t.Errorf("error %q does not say what is valid", err)
			}
			if _, err := os.Stat(filepath.Join(project, ".plasma")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a folder was created for a refused name")
			}
		})
	}
}

func TestWriteConfig(t *testing.T) {
	wd, err := OpenWorkdir(t.TempDir(), "prod")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Resources: []Resource{{Type: "local_file", Name: "a", Attrs: map[string]any{"content": "x"}}}}
	if err := wd.WriteConfig(cfg); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(wd.Path(configFile))
	if err != nil {
		t.Fatal(err)
	}
	want := "resource \"local_file\" \"a\" {\n  content = \"x\"\n}\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("main.tf mismatch (-want +got):\n%s", diff)
	}
	bad := &Config{Resources: []Resource{{Type: "local_file", Name: "1"}}}
	if err := wd.WriteConfig(bad); !errors.Is(err, ErrInvalid) {
		t.Errorf("WriteConfig(bad) = %v, want ErrInvalid", err)
	}
	if after, _ := os.ReadFile(wd.Path(configFile)); string(after) != want {
		t.Errorf("a refused configuration changed main.tf to %q", after)
	}
}

func TestWriteVarsFile(t *testing.T) {
	wd, err := OpenWorkdir(t.TempDir(), "prod")
	if err != nil {
		t.Fatal(err)
	}
	remove, err := wd.WriteVarsFile(map[string]any{"hcloud_token": "s3cr3t", "n": 3})
	if err != nil {
		t.Fatal(err)
	}
	p := wd.Path(varsFile)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"hcloud_token": "s3cr3t", "n": float64(3)}, got); diff != "" {
		t.Errorf("vars mismatch (-want +got):\n%s", diff)
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("variables file still there after remove: %v", err)
	}
	if err := remove(); err != nil {
		t.Errorf("second remove = %v, want nil", err)
	}
}

func TestWriteVarsFileRefusesBadInput(t *testing.T) {
	wd, err := OpenWorkdir(t.TempDir(), "prod")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wd.WriteVarsFile(map[string]any{"bad name": "s3cr3t"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad name: %v, want ErrInvalid", err)
	}
	_, err = wd.WriteVarsFile(map[string]any{"token": func() {}})
	if err == nil || strings.Contains(err.Error(), "func") {
		t.Errorf("unencodable value: %v, want an error that quotes nothing", err)
	}
	if _, err := os.Stat(wd.Path(varsFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused variables file was written")
	}
}

func TestClean(t *testing.T) {
	all := []string{configFile, planFile, varsFile, "extra.auto.tfvars.json", StateFile, stateBackupFile,
		".terraform.lock.hcl", ".terraform.tfstate.lock.info", ".tmp-main.tf-123", "notes.txt"}
	tests := map[string]struct {
		opts CleanOptions
		want []string
	}{
		"transient state is removed with the plan and variables": {
			want: []string{".terraform", ".terraform.lock.hcl", configFile, "notes.txt"},
		},
		"KeepState keeps the local state": {
			opts: CleanOptions{KeepState: true},
			want: []string{".terraform", ".terraform.lock.hcl", configFile, "notes.txt", StateFile, stateBackupFile},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			wd, err := OpenWorkdir(t.TempDir(), "prod")
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range all {
				if err := os.WriteFile(wd.Path(n), []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.MkdirAll(wd.Path(".terraform/providers"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := wd.Clean(tc.opts); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, list(t, wd.Dir())); diff != "" {
				t.Errorf("left after Clean (-want +got):\n%s", diff)
			}
			if err := wd.Clean(tc.opts); err != nil {
				t.Errorf("second Clean = %v, want nil", err)
			}
		})
	}
}

func list(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}
