package tofu

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeExe writes an executable shell script named name into dir.
func fakeExe(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFind(t *testing.T) {
	type layout struct {
		onPath []string // executables in the PATH folder
		plain  []string // non-executable files in the PATH folder
	}
	tests := map[string]struct {
		layout    layout
		opts      func(dir string) FindOptions
		wantName  string
		wantPath  func(dir string) string
		wantTried func(dir string) []string // set when an error is expected
	}{
		"tofu wins over terraform on PATH": {
			layout:   layout{onPath: []string{"tofu", "terraform"}},
			opts:     func(string) FindOptions { return FindOptions{} },
			wantName: "tofu",
			wantPath: func(dir string) string { return filepath.Join(dir, "bin", "tofu") },
		},
		"terraform is found when there is no tofu": {
			layout:   layout{onPath: []string{"terraform"}},
			opts:     func(string) FindOptions { return FindOptions{} },
			wantName: "terraform",
			wantPath: func(dir string) string { return filepath.Join(dir, "bin", "terraform") },
		},
		"a tofu that is not executable is passed over": {
			layout:   layout{onPath: []string{"terraform"}, plain: []string{"tofu"}},
			opts:     func(string) FindOptions { return FindOptions{} },
			wantName: "terraform",
			wantPath: func(dir string) string { return filepath.Join(dir, "bin", "terraform") },
		},
		"an explicit path wins over PATH": {
			layout: layout{onPath: []string{"tofu", "terraform"}},
			opts: func(dir string) FindOptions {
				return FindOptions{Path: fakeExe(t, dir, "tofu-1.12")}
			},
			wantName: "tofu-1.12",
			wantPath: func(dir string) string { return filepath.Join(dir, "tofu-1.12") },
		},
		"custom names are looked up in order": {
			layout:   layout{onPath: []string{"tofu", "terraform"}},
			opts:     func(string) FindOptions { return FindOptions{Names: []string{"terraform", "tofu"}} },
			wantName: "terraform",
			wantPath: func(dir string) string { return filepath.Join(dir, "bin", "terraform") },
		},
		"nothing on PATH lists both names": {
			opts: func(string) FindOptions { return FindOptions{} },
			wantTried: func(string) []string {
				return []string{"tofu on PATH", "terraform on PATH"}
			},
		},
		"a missing explicit path does not fall back to PATH": {
			layout: layout{onPath: []string{"tofu"}},
			opts: func(dir string) FindOptions {
				return FindOptions{Path: filepath.Join(dir, "nope")}
			},
			wantTried: func(dir string) []string { return []string{filepath.Join(dir, "nope")} },
		},
		"an explicit path to a folder is refused": {
			opts:      func(dir string) FindOptions { return FindOptions{Path: dir} },
			wantTried: func(dir string) []string { return []string{dir} },
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "bin")
			if err := os.Mkdir(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, n := range tc.layout.onPath {
				fakeExe(t, bin, n)
			}
			for _, n := range tc.layout.plain {
				if err := os.WriteFile(filepath.Join(bin, n), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("PATH", bin)
			got, err := Find(context.Background(), tc.opts(dir))
			if tc.wantTried != nil {
				var nf *NotFoundError
				if !errors.As(err, &nf) || !errors.Is(err, ErrNoBinary) {
					t.Fatalf("Find = %+v, %v; want a *NotFoundError matching ErrNoBinary", got, err)
				}
				if diff := cmp.Diff(tc.wantTried(dir), nf.Tried); diff != "" {
					t.Errorf("Tried mismatch (-want +got):\n%s", diff)
				}
				for _, tried := range nf.Tried {
					if !strings.Contains(err.Error(), tried) {
						t.Errorf("error %q does not name %q", err, tried)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := Binary{Path: tc.wantPath(dir), Name: tc.wantName}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Find mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFindRelativePathIsMadeAbsolute(t *testing.T) {
	dir := t.TempDir()
	fakeExe(t, dir, "tofu")
	t.Chdir(dir)
	got, err := Find(context.Background(), FindOptions{Path: "tofu"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Path != filepath.Join(dir, "tofu") {
		t.Errorf("Path = %q, want %q", got.Path, filepath.Join(dir, "tofu"))
	}
}

func TestFindRefusesBadOptions(t *testing.T) {
	tests := map[string]struct {
		opts FindOptions
		want string
	}{
		"a name with a slash": {
			opts: FindOptions{Names: []string{"bin/tofu"}},
			want: `name "bin/tofu"`,
		},
		"an empty name": {
			opts: FindOptions{Names: []string{""}},
			want: `name ""`,
		},
		"an install without a version": {
			opts: FindOptions{Install: &InstallOptions{Dir: "x"}},
			want: `version "": invalid: want an exact version`,
		},
		"an install with a constraint instead of a version": {
			opts: FindOptions{Install: &InstallOptions{Version: ">= 1.5", Dir: "x"}},
			want: `version ">= 1.5"`,
		},
		"an install with a v prefix": {
			opts: FindOptions{Install: &InstallOptions{Version: "v1.5.7", Dir: "x"}},
			want: `version "v1.5.7"`,
		},
		"an install without a folder": {
			opts: FindOptions{Install: &InstallOptions{Version: "1.5.7"}},
			want: "Dir is required",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir())
			_, err := Find(context.Background(), tc.opts)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Find = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

// TestFindUsesAnInstalledBinaryWithoutDownloading checks the install path
// up to the network: a binary already in Install.Dir is used, and the
// releases installer is configured but never run.
func TestFindUsesAnInstalledBinaryWithoutDownloading(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "1.5.7"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := fakeExe(t, filepath.Join(dir, "1.5.7"), "terraform")
	got, err := Find(context.Background(), FindOptions{Install: &InstallOptions{Version: "1.5.7", Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Binary{Path: p, Name: "terraform", Installed: true}, got); diff != "" {
		t.Errorf("Find mismatch (-want +got):\n%s", diff)
	}

	src, err := installSource(InstallOptions{Version: "1.5.7", Dir: dir, BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if src.Version.String() != "1.5.7" || src.InstallDir != filepath.Join(dir, "1.5.7") || src.ApiBaseURL != "http://127.0.0.1:1" || src.Product.Name != "terraform" {
		t.Errorf("installSource = %+v", src)
	}
	if err := src.Validate(); err != nil {
		t.Errorf("installer Validate: %v", err)
	}
}
