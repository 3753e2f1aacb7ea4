package bootassets

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stageRelease writes a release's kernel and netboot initrd under
// state/assets/.
func stageRelease(t testing.TB, state, release string) {
	t.Helper()
	dir := filepath.Join(state, AssetsDir, release)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{AssetKernel, AssetNetbootInitrd} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name+" bytes"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStagedReleasesListsCompleteReleases(t *testing.T) {
	state := t.TempDir()
	if got, err := StagedReleases(context.Background(), state); err != nil || got != nil {
		t.Errorf("no assets folder: %v, %v; want none and no error", got, err)
	}
	stageRelease(t, state, "9.1-1")
	stageRelease(t, state, "8.4-1")
	os.Remove(filepath.Join(state, AssetsDir, "8.4-1", AssetNetbootInitrd))
	stageRelease(t, state, ".hidden")
	os.MkdirAll(filepath.Join(state, AssetsDir, "empty"), 0o755)
	got, err := StagedReleases(context.Background(), state)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"9.1-1"}, got); diff != "" {
		t.Errorf("releases (-want +got):\n%s", diff)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := StagedReleases(ctx, state); err == nil {
		t.Error("a cancelled context listed releases")
	}
}

func TestStagedNeedsRegularFilesInsideTheAssets(t *testing.T) {
	state := t.TempDir()
	stageRelease(t, state, "9.1-1")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, AssetKernel), []byte("elsewhere"), 0o644)
	os.MkdirAll(filepath.Join(state, AssetsDir, "escape"), 0o755)
	os.WriteFile(filepath.Join(state, AssetsDir, "escape", AssetNetbootInitrd), nil, 0o644)
	os.Symlink(filepath.Join(outside, AssetKernel), filepath.Join(state, AssetsDir, "escape", AssetKernel))
	root, err := os.OpenRoot(filepath.Join(state, AssetsDir))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for release, want := range map[string]bool{"9.1-1": true, "escape": false, "missing": false} {
		if got := Staged(root, release); got != want {
			t.Errorf("Staged(%s) = %v, want %v", release, got, want)
		}
	}
}
