package bootassets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
)

// maxManifest bounds a manifest read: 1 MiB.
const maxManifest = 1 << 20

// Release describes one prepared release folder; its manifest.json holds
// the same fields.
type Release struct {
	// Format is the manifest format version.
	Format int `json:"format"`
	// Name is the folder name under assets/, for example "9.2-1"
	// (products other than Proxmox VE are prefixed: "pbs-4.1-1").
	Name string `json:"name"`
	// Product is the ISO's product code ("pve"); ProductLong its name.
	Product     string `json:"product,omitempty"`
	ProductLong string `json:"product_long,omitempty"`
	// Version is the product release ("9.2") and ISORelease the ISO
	// build ("1"), as the installer reports them in its system info.
	Version    string `json:"version,omitempty"`
	ISORelease string `json:"iso_release,omitempty"`
	// SourceISO is the base name of the ISO prepared from, and
	// SourceSHA256 its checksum.
	SourceISO    string `json:"source_iso"`
	SourceSHA256 string `json:"source_sha256"`
	// FetchMode is the "mode" of the served ISO's
	// /auto-installer-mode.toml ("http", "iso", "partition"), or "" when
	// the ISO has none. AnswerURL and CertFingerprint are its [http]
	// settings.
	FetchMode       string `json:"fetch_mode,omitempty"`
	AnswerURL       string `json:"answer_url,omitempty"`
	CertFingerprint string `json:"cert_fingerprint,omitempty"`
	// AnswerAuth is true when the served ISO's mode file holds an answer
	// token (9.2+): its installer sends it as a bearer, and the window
	// refuses answer requests without it. The token itself is kept apart
	// (see [AnswerToken]).
	AnswerAuth bool `json:"answer_auth,omitempty"`
	// AskPatched is true when the netboot initrd carries the boot-disk
	// prompt (see [AskDiskKernelArg]).
	AskPatched bool `json:"ask_patched"`
	// SecureBoot is the Secure Boot chain staged with the release
	// ([AssetShim], [AssetGrub]); nil when it has none.
	SecureBoot *SecureBootChain `json:"secure_boot,omitempty"`
	// Warnings are what prepare warned about, for the operator.
	Warnings []string `json:"warnings,omitempty"`
	// Created is when the release was prepared.
	Created time.Time `json:"created"`
	// Assets lists every file of the folder but the manifest.
	Assets []Asset `json:"assets"`
	// Dir is the folder's path; it is not stored.
	Dir string `json:"-"`
}

// genericSuffix ends the default name of a release prepared with
// [PrepareOptions.Generic].
const genericSuffix = "-generic"

// Generic reports whether the release's ISO fetches its answer over HTTP
// without a URL of its own, from the site's DHCP option 250 or DNS TXT
// record ([PrepareOptions.Generic], or an ISO prepared so by
// proxmox-auto-install-assistant).
func (r *Release) Generic() bool { return r.FetchMode == "http" && r.AnswerURL == "" }

// Asset is one file of a release folder.
type Asset struct {
	// Name is the file's base name, for example [AssetKernel].
	Name string `json:"name"`
	// Size is its length in bytes.
	Size int64 `json:"size"`
	// SHA256 is its checksum in lower-case hex.
	SHA256 string `json:"sha256"`
}

// writeManifest writes rel as dir/manifest.json.
func writeManifest(dir string, rel *Release) error {
	b, err := json.MarshalIndent(rel, "", "  ")
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, ManifestName), append(b, '\n'), 0o644)
}

// ReadRelease reads the manifest of the release folder dir without
// checking the assets. Errors wrap [fs.ErrNotExist] when dir has no
// manifest, and [ErrReleaseCorrupt] when it is malformed.
func ReadRelease(ctx context.Context, dir string) (*Release, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := regularfile.Read(filepath.Join(dir, ManifestName), maxManifest)
	if err != nil {
		return nil, fmt.Errorf("read release %s: %w", dir, err)
	}
	rel, err := parseManifest(b)
	if err != nil {
		return nil, fmt.Errorf("read release %s: %w: %w", dir, ErrReleaseCorrupt, err)
	}
	if rel.Name != filepath.Base(dir) {
		return nil, fmt.Errorf("read release %s: %w: manifest names release %q", dir, ErrReleaseCorrupt, rel.Name)
	}
	rel.Dir = dir
	return rel, nil
}

// parseManifest decodes and checks a manifest.
func parseManifest(b []byte) (*Release, error) {
	var rel Release
	if err := json.Unmarshal(b, &rel); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestName, err)
	}
	if rel.Format != manifestFormat {
		return nil, fmt.Errorf("%s: format %d, want %d", ManifestName, rel.Format, manifestFormat)
	}
	if !releaseNameRE.MatchString(rel.Name) {
		return nil, fmt.Errorf("%s: release name %q is not a folder name", ManifestName, rel.Name)
	}
	if len(rel.Assets) == 0 {
		return nil, fmt.Errorf("%s: lists no assets", ManifestName)
	}
	seen := map[string]bool{}
	for _, a := range rel.Assets {
		if a.Name == "" || a.Name == ManifestName || a.Name != filepath.Base(a.Name) || strings.HasPrefix(a.Name, ".") || strings.ContainsAny(a.Name, `/\`) {
			return nil, fmt.Errorf("%s: asset name %q is not a file name of the folder", ManifestName, a.Name)
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("%s: asset %s listed twice", ManifestName, a.Name)
		}
		seen[a.Name] = true
		if a.Size < 0 {
			return nil, fmt.Errorf("%s: asset %s has size %d", ManifestName, a.Name, a.Size)
		}
		if raw, err := hex.DecodeString(a.SHA256); err != nil || len(raw) != sha256.Size || a.SHA256 != strings.ToLower(a.SHA256) {
			return nil, fmt.Errorf("%s: asset %s: sha256 %q is not 64 lower-case hex digits", ManifestName, a.Name, a.SHA256)
		}
	}
	return &rel, nil
}

// VerifyRelease reads the manifest of the release folder dir and checks
// that every asset it lists is there with its recorded size and SHA-256.
// It reads every byte (a few seconds for an ISO). Errors wrap
// [fs.ErrNotExist] when dir has no manifest, [ErrReleaseCorrupt] when the
// manifest is malformed or an asset is missing or differs, and ctx's error
// when it ends first.
func VerifyRelease(ctx context.Context, dir string) (*Release, error) {
	rel, err := ReadRelease(ctx, dir)
	if err != nil {
		return nil, err
	}
	for _, a := range rel.Assets {
		if err := verifyAsset(ctx, filepath.Join(dir, a.Name), a); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, fmt.Errorf("verify release %s: %w", dir, cerr)
			}
			return nil, fmt.Errorf("verify release %s: %w: %w", dir, ErrReleaseCorrupt, err)
		}
	}
	return rel, nil
}

func verifyAsset(ctx context.Context, path string, a Asset) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("asset %s: %w", a.Name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("asset %s: %w", a.Name, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("asset %s is not a regular file", a.Name)
	}
	if st.Size() != a.Size {
		return fmt.Errorf("asset %s is %d bytes, manifest says %d", a.Name, st.Size(), a.Size)
	}
	h := sha256.New()
	if _, err := copyCtx(ctx, h, io.LimitReader(f, a.Size)); err != nil {
		return fmt.Errorf("asset %s: %w", a.Name, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != a.SHA256 {
		return fmt.Errorf("asset %s has sha256 %s, manifest says %s", a.Name, got, a.SHA256)
	}
	return nil
}

// ListReleases returns the releases prepared under stateDir, by name,
// reading their manifests without checking the assets. A folder without a
// manifest (never finished) is skipped; one with a malformed manifest is
// an error wrapping [ErrReleaseCorrupt]. No assets folder means no
// releases.
func ListReleases(ctx context.Context, stateDir string) ([]*Release, error) {
	dir := filepath.Join(stateDir, AssetsDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list releases: %w", err)
	}
	var out []*Release
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		rel, err := ReadRelease(ctx, filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
