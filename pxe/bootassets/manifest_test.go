package bootassets

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVerifyReleaseCatchesTampering(t *testing.T) {
	iso := testISO(t)
	base := t.TempDir()
	tests := map[string]struct {
		tamper  func(dir string)
		wantErr error
	}{
		"an untouched release verifies": {tamper: func(string) {}},
		"a flipped byte in the kernel fails": {tamper: func(dir string) {
			b := readFile(t, filepath.Join(dir, AssetKernel))
			b[3] ^= 0xff
			os.WriteFile(filepath.Join(dir, AssetKernel), b, 0o644)
		}, wantErr: ErrReleaseCorrupt},
		"a truncated netboot initrd fails": {tamper: func(dir string) {
			os.Truncate(filepath.Join(dir, AssetNetbootInitrd), 100)
		}, wantErr: ErrReleaseCorrupt},
		"a missing ISO fails": {tamper: func(dir string) {
			os.Remove(filepath.Join(dir, AssetISO))
		}, wantErr: ErrReleaseCorrupt},
		"a manifest that is not JSON fails": {tamper: func(dir string) {
			os.WriteFile(filepath.Join(dir, ManifestName), []byte("{"), 0o644)
		}, wantErr: ErrReleaseCorrupt},
		"a manifest naming a file outside the folder fails": {tamper: func(dir string) {
			b := readFile(t, filepath.Join(dir, ManifestName))
			os.WriteFile(filepath.Join(dir, ManifestName), bytes.Replace(b, []byte(`"name": "linux26"`), []byte(`"name": "../linux26"`), 1), 0o644)
		}, wantErr: ErrReleaseCorrupt},
		"a manifest naming another release fails": {tamper: func(dir string) {
			b := readFile(t, filepath.Join(dir, ManifestName))
			os.WriteFile(filepath.Join(dir, ManifestName), bytes.Replace(b, []byte(`"name": "9.2-1"`), []byte(`"name": "9.1-1"`), 1), 0o644)
		}, wantErr: ErrReleaseCorrupt},
		"no manifest is not-exist": {tamper: func(dir string) {
			os.Remove(filepath.Join(dir, ManifestName))
		}, wantErr: fs.ErrNotExist},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			state := filepath.Join(base, strings.ReplaceAll(name, " ", "-"))
			rel, err := Prepare(context.Background(), PrepareOptions{ISO: iso, StateDir: state})
			if err != nil {
				t.Fatal(err)
			}
			tc.tamper(rel.Dir)
			_, err = VerifyRelease(context.Background(), rel.Dir)
			if tc.wantErr == nil && err != nil {
				t.Errorf("VerifyRelease: %v", err)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("VerifyRelease err = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestPrepareKeepsReleasesSideBySideAndReplacesOne(t *testing.T) {
	needTool(t, "xorriso", "xorriso")
	state := t.TempDir()
	iso92 := buildISO(t, proxmoxLayout(t, testInitrd(t, "gzip", testInit(t))), isoOpts{})
	f84 := proxmoxLayout(t, testInitrd(t, "gzip", testInit(t)))
	f84[".cd-info"] = []byte("PRODUCT='pve'\nRELEASE='8.4'\nISORELEASE='1'\n")
	iso84 := buildISO(t, f84, isoOpts{})
	ctx := context.Background()
	for _, o := range []PrepareOptions{
		{ISO: iso92, StateDir: state, AnswerURL: "http://192.0.2.10:8090/answer"},
		{ISO: iso84, StateDir: state},
		{ISO: iso92, StateDir: state, AnswerURL: "http://192.0.2.99:8090/answer"},
	} {
		if _, err := Prepare(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	rels, err := ListReleases(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rels {
		got = append(got, r.Name+" "+r.AnswerURL)
	}
	if diff := cmp.Diff([]string{"8.4-1 ", "9.2-1 http://192.0.2.99:8090/answer"}, got); diff != "" {
		t.Errorf("releases (-want +got):\n%s", diff)
	}
	ents, _ := os.ReadDir(filepath.Join(state, AssetsDir))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{".lock", "8.4-1", "9.2-1"}, names); diff != "" {
		t.Errorf("assets folder (-want +got):\n%s", diff)
	}
	for _, r := range rels {
		if _, err := VerifyRelease(ctx, r.Dir); err != nil {
			t.Errorf("VerifyRelease %s: %v", r.Name, err)
		}
	}
	// An 8.4 mode file keeps partition_label; checked via the 9.2 one.
	if !bytes.Contains(readISOPath(t, rels[1].Path(AssetISO), isoModeFile), []byte("192.0.2.99")) {
		t.Error("the replaced release does not carry the new URL")
	}
}

// Asset returns the asset called name.
func (r *Release) Asset(name string) (Asset, bool) {
	for _, a := range r.Assets {
		if a.Name == name {
			return a, true
		}
	}
	return Asset{}, false
}

// Path returns the path of the asset called name in the release folder.
func (r *Release) Path(name string) string { return filepath.Join(r.Dir, name) }
