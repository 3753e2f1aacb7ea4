package pxe

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/lockfile"
)

// Names of what [Prepare] writes under <state-dir>/assets/<release>/.
const (
	// AssetsDir is the folder of the state dir holding one folder per
	// prepared release.
	AssetsDir = "assets"
	// AssetKernel is the installer kernel, the ISO's /boot/linux26.
	AssetKernel = "linux26"
	// AssetInitrd is the ISO's /boot/initrd.img, byte for byte. Booted
	// with [AssetISO] as a second, named initrd (iPXE's
	// "initrd proxmox.iso /proxmox.iso") it is a complete netboot.
	AssetInitrd = "initrd.img"
	// AssetISO is the ISO the installer mounts as /proxmox.iso: the
	// source ISO, or its copy with the answer URL baked in.
	AssetISO = "proxmox.iso"
	// AssetNetbootInitrd is the single-file netboot initrd:
	// [AssetInitrd], zero padding to 4 bytes, then a newc archive holding
	// a patched "init" (with PatchAsk) and "proxmox.iso". Loaders that
	// take one initrd (pxelinux) need it.
	AssetNetbootInitrd = "initrd-netboot.img"
	// AssetAskOverlay, present when the release is AskPatched, is a newc
	// archive holding only the patched "init". Loaded after [AssetInitrd]
	// and before [AssetISO] (three iPXE initrd lines) it adds the
	// boot-disk prompt without the single-file initrd.
	AssetAskOverlay = "ask-overlay.cpio"
	// ManifestName is the release's manifest: what was prepared, from
	// what, and the SHA-256 of every asset.
	ManifestName = "manifest.json"
	// manifestFormat is the manifest's format version.
	manifestFormat = 1
)

// Kernel command line and ISO conventions of the prepared assets.
const (
	// AskDiskKernelArg, on the installer's kernel command line, makes an
	// initrd prepared with PatchAsk prompt on the console for the boot
	// disk and append "bootdisk=<name>" to the answer URL. Add it for
	// registrations whose boot disk is "ask".
	AskDiskKernelArg = "plasma.askdisk=1"
	// InitPatchAnchor is the line of the installer's /init after which
	// the PatchAsk block is inserted: by then the installer's root is
	// mounted at /mnt/.installer-mp and the ISO at /mnt.
	InitPatchAnchor = "cp /etc/hostid /mnt/.installer-mp/etc/"
	// CertFingerprintAuto as [PrepareOptions.CertFingerprint] takes the
	// fingerprint from [PrepareOptions.FingerprintFunc].
	CertFingerprintAuto = "auto"
	// isoCapableFlag marks an ISO the automated installer can run from
	// (Proxmox VE 8.2 and later).
	isoCapableFlag = "/auto-installer-capable"
	// isoModeFile is where prepare-iso writes the fetch settings.
	isoModeFile = "/auto-installer-mode.toml"
	isoCDInfo   = "/.cd-info"
	isoKernel   = "/boot/linux26"
	isoInitrd   = "/boot/initrd.img"
)

// Errors returned by [Prepare], [InspectISO] and [VerifyRelease]; compare
// with errors.Is.
var (
	// ErrNotAutoInstallISO: the file is not an ISO 9660 image, or not a
	// Proxmox installer ISO that the automated installer can run from.
	ErrNotAutoInstallISO = errors.New("not an auto-install capable Proxmox ISO")
	// ErrXorrisoMissing: baking an answer URL into the ISO needs the
	// xorriso command (Debian package xorriso).
	ErrXorrisoMissing = errors.New("xorriso not found (install the Debian package xorriso)")
	// ErrReleaseCorrupt: a release folder's manifest is malformed, or an
	// asset is missing or differs from its recorded size or SHA-256.
	ErrReleaseCorrupt = errors.New("release assets do not match their manifest")
)

// PrepareOptions configures [Prepare]. ISO and StateDir are required; the
// zero value of every other field is its default.
type PrepareOptions struct {
	// ISO is the path of a Proxmox installer ISO (VE 8.2 or later). It is
	// only read.
	ISO string
	// StateDir is the node-provisioner state dir; the release lands in
	// <StateDir>/assets/<release>/.
	StateDir string
	// AnswerURL, when set, is baked into a copy of the ISO as
	// /auto-installer-mode.toml with mode "http", the way
	// "proxmox-auto-install-assistant prepare-iso --fetch-from http --url"
	// does (this needs xorriso). Empty keeps the ISO as it is: use an ISO
	// already prepared by proxmox-auto-install-assistant (with --fetch-from
	// http but no --url, the installer takes the URL from DHCP option 250
	// or DNS).
	AnswerURL string
	// CertFingerprint pins the answer server's TLS certificate: its
	// SHA-256 as hex, colons optional, any case (written as "AA:BB:…").
	// [CertFingerprintAuto] takes it from FingerprintFunc. Needs AnswerURL.
	CertFingerprint string
	// FingerprintFunc returns the fingerprint of the certificate kept in
	// the state dir; it is called only when CertFingerprint is "auto".
	FingerprintFunc func() (string, error)
	// PatchAsk patches the initrd's /init to prompt on the console for the
	// boot disk when the kernel command line holds [AskDiskKernelArg].
	// When the installer's init cannot be read or lacks
	// [InitPatchAnchor], prepare warns and goes on unpatched.
	PatchAsk bool
	// Release, when set, names the release folder instead of the name
	// read from the ISO (for example "9.2-1").
	Release string
	// Logger receives progress and warnings as key-values; nil discards.
	Logger *slog.Logger
	// Progress receives human-readable progress lines; on a terminal a
	// progress bar. Nil discards.
	Progress io.Writer
}

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
	// AskPatched is true when the netboot initrd carries the boot-disk
	// prompt (see [AskDiskKernelArg]).
	AskPatched bool `json:"ask_patched"`
	// Warnings are what prepare warned about, for the operator.
	Warnings []string `json:"warnings,omitempty"`
	// Created is when the release was prepared.
	Created time.Time `json:"created"`
	// Assets lists every file of the folder but the manifest.
	Assets []Asset `json:"assets"`
	// Dir is the folder's path; it is not stored.
	Dir string `json:"-"`
}

// Asset is one file of a release folder.
type Asset struct {
	// Name is the file's base name, for example [AssetKernel].
	Name string `json:"name"`
	// Size is its length in bytes.
	Size int64 `json:"size"`
	// SHA256 is its checksum in lower-case hex.
	SHA256 string `json:"sha256"`
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

// Prepare turns a Proxmox installer ISO into netboot assets under
// <StateDir>/assets/<release>/, without root and without mounting
// anything: it checks the ISO is auto-install capable, copies its kernel
// and initrd, bakes the answer URL into a copy of the ISO (with
// AnswerURL), and builds [AssetNetbootInitrd]. The folder appears whole or
// not at all; preparing a release again replaces it. Releases prepared
// from other ISOs stay side by side.
//
// Errors wrap [ErrNotAutoInstallISO] for an ISO that is not an auto-install
// capable Proxmox ISO, [ErrXorrisoMissing] when AnswerURL is set and
// xorriso is not installed, [lockfile.ErrLocked] while another prepare runs
// on the same state dir, and ctx's error when it ends first.
func Prepare(ctx context.Context, opts PrepareOptions) (*Release, error) {
	p, err := newPreparer(opts)
	if err != nil {
		return nil, err
	}
	rel, err := p.run(ctx)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w (%w)", cerr, err)
		}
		return nil, fmt.Errorf("prepare %s: %w", opts.ISO, err)
	}
	return rel, nil
}

type preparer struct {
	opts    PrepareOptions
	log     *slog.Logger
	prog    *progress
	fp      string // normalised fingerprint
	xorriso string
	zstd    string
	rel     Release
}

func newPreparer(opts PrepareOptions) (*preparer, error) {
	if opts.ISO == "" {
		return nil, errors.New("prepare: no ISO given: want the path of a Proxmox VE installer ISO")
	}
	if opts.StateDir == "" {
		return nil, errors.New("prepare: no state dir given")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &preparer{opts: opts, log: log, prog: newProgress(opts.Progress)}
	if opts.AnswerURL != "" {
		if err := checkAnswerURL(opts.AnswerURL); err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
	}
	if opts.CertFingerprint != "" {
		if opts.AnswerURL == "" {
			return nil, errors.New("prepare: a certificate fingerprint needs an answer URL to pin")
		}
		fp := opts.CertFingerprint
		if fp == CertFingerprintAuto {
			if opts.FingerprintFunc == nil {
				return nil, errors.New(`prepare: certificate fingerprint "auto" but no certificate to read it from`)
			}
			got, err := opts.FingerprintFunc()
			if err != nil {
				return nil, fmt.Errorf("prepare: read certificate fingerprint: %w", err)
			}
			fp = got
		}
		n, err := normalizeFingerprint(fp)
		if err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
		p.fp = n
	}
	if opts.Release != "" && !releaseNameRE.MatchString(opts.Release) {
		return nil, fmt.Errorf("prepare: release name %q: want letters, digits, '.', '-', '_' or '+', such as 9.2-1", opts.Release)
	}
	if opts.AnswerURL != "" {
		path, err := exec.LookPath("xorriso")
		if err != nil {
			return nil, fmt.Errorf("prepare: baking the answer URL into the ISO: %w: %w", ErrXorrisoMissing, err)
		}
		p.xorriso = path
	}
	if path, err := exec.LookPath("zstd"); err == nil {
		p.zstd = path
	}
	return p, nil
}

func (p *preparer) warn(msg string, args ...any) {
	p.log.Warn(msg, args...)
	line := msg
	for i := 0; i+1 < len(args); i += 2 {
		line += fmt.Sprintf(" %v=%v", args[i], args[i+1])
	}
	p.rel.Warnings = append(p.rel.Warnings, line)
	p.prog.line("warning: " + line)
}

func (p *preparer) run(ctx context.Context) (*Release, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	src, err := os.Open(p.opts.ISO)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: %w", p.opts.ISO, ErrNotAutoInstallISO)
	}
	im, err := openISO(src, st.Size())
	if err != nil {
		return nil, fmt.Errorf("read ISO: %w: %w", ErrNotAutoInstallISO, err)
	}
	if err := checkProxmoxISO(im); err != nil {
		return nil, err
	}
	if st.Size() > newcMaxSize {
		return nil, fmt.Errorf("the ISO is %d bytes: a newc initrd entry holds at most 4 GiB", st.Size())
	}
	info, err := readISOInfo(ctx, im, p.opts.ISO, p.opts.Release, initrdScanner{zstd: p.zstd})
	if err != nil {
		return nil, err
	}
	for _, w := range info.warnings {
		p.warn(w)
	}
	name := info.Release
	if p.opts.Release != "" {
		name = p.opts.Release
	}
	p.rel = Release{Format: manifestFormat, Name: name, Product: info.Product, ProductLong: info.ProductLong,
		Version: info.Version, ISORelease: info.ISORelease, SourceISO: filepath.Base(p.opts.ISO), Warnings: p.rel.Warnings}
	p.log.Info("preparing release", "iso", p.opts.ISO, "release", name, "product", info.ProductLong)
	p.prog.line(fmt.Sprintf("preparing %s %s from %s", orString(info.ProductLong, "Proxmox"), name, filepath.Base(p.opts.ISO)))

	assets := filepath.Join(p.opts.StateDir, AssetsDir)
	if err := os.MkdirAll(assets, 0o755); err != nil {
		return nil, err
	}
	lock, err := lockfile.TryLock(filepath.Join(assets, ".lock"), "node-provisioner prepare")
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	cleanStale(assets, p.log)

	tmp, err := os.MkdirTemp(assets, atomicfile.TempPrefix+name+"-")
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := p.build(ctx, im, src, st.Size(), tmp); err != nil {
		return nil, err
	}
	p.rel.Created = time.Now().UTC().Truncate(time.Second)
	if err := writeManifest(tmp, &p.rel); err != nil {
		return nil, err
	}
	final := filepath.Join(assets, name)
	if err := swapDir(tmp, final); err != nil {
		return nil, err
	}
	done = true
	p.rel.Dir = final
	p.log.Info("release prepared", "release", name, "dir", final, "ask_patched", p.rel.AskPatched)
	p.prog.line(fmt.Sprintf("prepared %s in %s", name, final))
	rel := p.rel
	return &rel, nil
}

// build writes every asset into dir.
func (p *preparer) build(ctx context.Context, im *isoImage, src *os.File, srcSize int64, dir string) error {
	for _, x := range []struct{ from, to string }{{isoKernel, AssetKernel}, {isoInitrd, AssetInitrd}} {
		rec, err := im.lookup(x.from)
		if err != nil {
			return fmt.Errorf("ISO %s: %w", x.from, err)
		}
		r, err := im.open(rec)
		if err != nil {
			return err
		}
		a, err := copyAsset(ctx, filepath.Join(dir, x.to), r, rec.size(), p.prog.counter("extract "+x.from, rec.size()))
		if err != nil {
			return err
		}
		p.rel.Assets = append(p.rel.Assets, a)
	}

	// The ISO the installer will mount.
	isoPath := filepath.Join(dir, AssetISO)
	a, err := copyAsset(ctx, isoPath, io.NewSectionReader(src, 0, srcSize), srcSize, p.prog.counter("copy ISO", srcSize))
	if err != nil {
		return err
	}
	p.rel.SourceSHA256 = a.SHA256
	if p.opts.AnswerURL != "" {
		if err := p.bakeModeFile(ctx, im, dir, isoPath); err != nil {
			return err
		}
	}
	if err := p.readServedMode(isoPath); err != nil {
		return err
	}

	var init []byte
	if p.opts.PatchAsk {
		init = p.patchedInit(ctx, filepath.Join(dir, AssetInitrd))
		p.rel.AskPatched = init != nil
	}
	if err := p.buildNetbootInitrd(ctx, dir, init); err != nil {
		return err
	}
	if init == nil {
		return nil
	}
	a, err = writeAssetFunc(filepath.Join(dir, AssetAskOverlay), func(w io.Writer) error {
		cw := &newcWriter{w: w}
		if err := cw.file(newcEntry{Name: "init", Mode: 0o100755, Size: int64(len(init))}, bytes.NewReader(init)); err != nil {
			return err
		}
		return cw.close()
	}, nil)
	if err != nil {
		return err
	}
	p.rel.Assets = append(p.rel.Assets, a)
	return nil
}

// readServedMode records the fetch settings of the ISO that will be
// served, and warns when they cannot work.
func (p *preparer) readServedMode(isoPath string) error {
	f, err := os.Open(isoPath)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	im, err := openISO(f, st.Size())
	if err != nil {
		return fmt.Errorf("read prepared ISO: %w", err)
	}
	mode, err := readModeFile(im)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.warn("the ISO has no " + isoModeFile + " and no answer URL was given, so the automated installer has no answer to fetch: prepare with an answer URL, or use an ISO prepared by proxmox-auto-install-assistant")
		return nil
	case err != nil:
		return err
	}
	p.rel.FetchMode, p.rel.AnswerURL, p.rel.CertFingerprint = mode.Mode, mode.HTTP.URL, mode.HTTP.CertFingerprint
	if p.opts.PatchAsk && (mode.Mode != "http" || mode.HTTP.URL == "") {
		p.warn("the boot-disk prompt adds the disk to the answer URL, but the ISO fetches its answer in mode " + mode.Mode + " without a baked-in URL")
	}
	return nil
}

// buildNetbootInitrd writes the netboot initrd and records the ISO's and
// its own checksums.
func (p *preparer) buildNetbootInitrd(ctx context.Context, dir string, init []byte) error {
	initrd, err := os.Open(filepath.Join(dir, AssetInitrd))
	if err != nil {
		return err
	}
	defer initrd.Close()
	iso, err := os.Open(filepath.Join(dir, AssetISO))
	if err != nil {
		return err
	}
	defer iso.Close()
	ist, err := initrd.Stat()
	if err != nil {
		return err
	}
	sst, err := iso.Stat()
	if err != nil {
		return err
	}
	if sst.Size() > newcMaxSize {
		return fmt.Errorf("the prepared ISO is %d bytes: a newc initrd entry holds at most 4 GiB", sst.Size())
	}
	isoHash := sha256.New()
	total := ist.Size() + sst.Size()
	counter := p.prog.counter("build netboot initrd", total)
	a, err := writeAssetFunc(filepath.Join(dir, AssetNetbootInitrd), func(w io.Writer) error {
		if _, err := copyCtx(ctx, w, initrd); err != nil {
			return err
		}
		if r := ist.Size() % 4; r != 0 {
			if _, err := w.Write(make([]byte, 4-r)); err != nil {
				return err
			}
		}
		cw := &newcWriter{w: w}
		if init != nil {
			if err := cw.file(newcEntry{Name: "init", Mode: 0o100755, Size: int64(len(init))}, bytes.NewReader(init)); err != nil {
				return err
			}
		}
		if err := cw.file(newcEntry{Name: "proxmox.iso", Mode: 0o100644, Size: sst.Size()}, ctxReader{ctx, io.TeeReader(iso, isoHash)}); err != nil {
			return err
		}
		return cw.close()
	}, counter)
	if err != nil {
		return err
	}
	p.rel.Assets = append(p.rel.Assets, Asset{Name: AssetISO, Size: sst.Size(), SHA256: hex.EncodeToString(isoHash.Sum(nil))}, a)
	return nil
}

// checkProxmoxISO refuses an image that the automated installer cannot
// netboot from.
func checkProxmoxISO(im *isoImage) error {
	_, kerr := im.lookup(isoKernel)
	_, ierr := im.lookup(isoInitrd)
	_, ferr := im.lookup(isoCapableFlag)
	switch {
	case kerr != nil || ierr != nil:
		return fmt.Errorf("%w: no %s and %s, so not a Proxmox installer ISO (volume %q)", ErrNotAutoInstallISO, isoKernel, isoInitrd, im.volumeID)
	case ferr != nil:
		return fmt.Errorf("%w: no %s, so a Proxmox ISO older than VE 8.2 (take a current ISO)", ErrNotAutoInstallISO, isoCapableFlag)
	}
	return nil
}

// releaseNameRE is what a release folder may be called.
var releaseNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)

// isoNameRE finds a release in an ISO file name such as
// proxmox-ve_9.2-1.iso.
var isoNameRE = regexp.MustCompile(`_([0-9]+\.[0-9]+)-([0-9]+)`)

// isoInfo is what an ISO says about itself.
type isoInfo struct {
	cdInfo
	Release  string
	warnings []string
}

// readISOInfo reads the release from the ISO's /.cd-info, else the
// initrd's, else the ISO's file name.
// A release name given as override stands in when none of them says.
func readISOInfo(ctx context.Context, im *isoImage, path, override string, sc initrdScanner) (isoInfo, error) {
	var info isoInfo
	raw, err := im.readFile(isoCDInfo, 64<<10)
	if errors.Is(err, fs.ErrNotExist) {
		raw, err = readInitrdFile(ctx, im, sc, ".cd-info")
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			info.warnings = append(info.warnings, fmt.Sprintf("cannot read .cd-info from the initrd: %v", err))
		}
	}
	if err == nil {
		ci, perr := parseCDInfo(raw)
		if perr != nil {
			return info, fmt.Errorf("%s: %w", isoCDInfo, perr)
		}
		info.cdInfo = ci
	} else {
		m := isoNameRE.FindStringSubmatch(filepath.Base(path))
		if m == nil && override != "" {
			info.Release = override
			return info, nil
		}
		if m == nil {
			return info, fmt.Errorf("cannot tell the release: no .cd-info in the ISO or its initrd, and the file name %s holds none such as _9.2-1 (name the release with the release option)", filepath.Base(path))
		}
		info.Version, info.ISORelease = m[1], m[2]
		info.warnings = append(info.warnings, "no .cd-info found; release "+m[1]+"-"+m[2]+" taken from the file name")
	}
	info.Release = info.releaseName()
	if !releaseNameRE.MatchString(info.Release) {
		return info, fmt.Errorf(".cd-info gives release %q, which cannot name a folder (name the release with the release option)", info.Release)
	}
	return info, nil
}

// readInitrdFile returns the last copy of the file name in the ISO's
// initrd, as the kernel would leave it.
func readInitrdFile(ctx context.Context, im *isoImage, sc initrdScanner, name string) ([]byte, error) {
	rec, err := im.lookup(isoInitrd)
	if err != nil {
		return nil, err
	}
	r, err := im.open(rec)
	if err != nil {
		return nil, err
	}
	return findInitrdFile(ctx, sc, r, name)
}

// findInitrdFile returns the last regular file called name (at most 4 MiB)
// in the initrd r, or an error wrapping fs.ErrNotExist.
func findInitrdFile(ctx context.Context, sc initrdScanner, r io.Reader, name string) ([]byte, error) {
	var got []byte
	found := false
	err := sc.scan(ctx, r, func(f cpioFile, body io.Reader) error {
		if f.Name != name {
			return nil
		}
		if !f.isRegular() {
			got, found = nil, false
			return nil
		}
		if f.Size > 4<<20 {
			return fmt.Errorf("initrd %s is %d bytes, more than expected", name, f.Size)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		got, found = b, true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read initrd: %w", err)
	}
	if !found {
		return nil, fmt.Errorf("initrd %s: %w", name, fs.ErrNotExist)
	}
	return got, nil
}

// cdInfo is the installer's /.cd-info: shell assignments such as
// RELEASE='9.2'.
type cdInfo struct {
	Product, ProductLong, Version, ISORelease string
}

// parseCDInfo reads the KEY='value' lines of a .cd-info file the way the
// installer does (keys case-insensitive, quotes optional).
func parseCDInfo(b []byte) (cdInfo, error) {
	var ci cdInfo
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSpace(line)
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t#") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		switch strings.ToLower(k) {
		case "product":
			ci.Product = strings.ToLower(v)
		case "productlong":
			ci.ProductLong = v
		case "release":
			ci.Version = v
		case "isorelease":
			ci.ISORelease = v
		}
	}
	if ci.Version == "" {
		return ci, errors.New("no RELEASE line")
	}
	return ci, nil
}

// releaseName is the folder name: "9.2-1" for Proxmox VE, prefixed with
// the product code for other products.
func (ci cdInfo) releaseName() string {
	n := ci.Version
	if ci.ISORelease != "" {
		n += "-" + ci.ISORelease
	}
	if ci.Product != "" && ci.Product != "pve" {
		n = ci.Product + "-" + n
	}
	return n
}

// ISOInfo describes a Proxmox installer ISO, as [InspectISO] reads it.
type ISOInfo struct {
	// Release is the folder name [Prepare] would use, for example "9.2-1".
	Release string
	// Product, ProductLong, Version and ISORelease come from .cd-info.
	Product, ProductLong, Version, ISORelease string
	// VolumeID is the ISO 9660 volume identifier.
	VolumeID string
	// FetchMode, AnswerURL and CertFingerprint come from the ISO's
	// /auto-installer-mode.toml; FetchMode is "" when it has none.
	FetchMode, AnswerURL, CertFingerprint string
}

// InspectISO reads what [Prepare] would read from the ISO at path, without
// writing anything. Errors wrap [ErrNotAutoInstallISO] for a file that is
// not an auto-install capable Proxmox ISO.
func InspectISO(ctx context.Context, path string) (*ISOInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	im, err := openISO(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w: %w", path, ErrNotAutoInstallISO, err)
	}
	if err := checkProxmoxISO(im); err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	sc := initrdScanner{}
	if z, err := exec.LookPath("zstd"); err == nil {
		sc.zstd = z
	}
	info, err := readISOInfo(ctx, im, path, "", sc)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	out := &ISOInfo{Release: info.Release, Product: info.Product, ProductLong: info.ProductLong,
		Version: info.Version, ISORelease: info.ISORelease, VolumeID: im.volumeID}
	mode, err := readModeFile(im)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	if err == nil {
		out.FetchMode, out.AnswerURL, out.CertFingerprint = mode.Mode, mode.HTTP.URL, mode.HTTP.CertFingerprint
	}
	return out, nil
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// copyAsset copies exactly size bytes of r into a new file at path and
// returns its [Asset].
func copyAsset(ctx context.Context, path string, r io.Reader, size int64, counter io.Writer) (Asset, error) {
	return writeAssetFunc(path, func(w io.Writer) error {
		n, err := copyCtx(ctx, w, io.LimitReader(r, size))
		if err == nil && n != size {
			err = fmt.Errorf("got %d of %d bytes: %w", n, size, io.ErrUnexpectedEOF)
		}
		return err
	}, counter)
}

// writeAssetFunc creates path (0644), lets fill write it, syncs it and
// returns its size and checksum. counter, when not nil, sees every byte.
func writeAssetFunc(path string, fill func(io.Writer) error, counter io.Writer) (Asset, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return Asset{}, err
	}
	h := sha256.New()
	cw := &countWriter{}
	ws := []io.Writer{f, h, cw}
	if counter != nil {
		ws = append(ws, counter)
	}
	err = fill(io.MultiWriter(ws...))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if d, ok := counter.(interface{ finish() }); ok {
		d.finish()
	}
	if err != nil {
		return Asset{}, fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return Asset{Name: filepath.Base(path), Size: cw.n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

// copyCtx copies r to w in 1 MiB chunks until EOF or ctx ends.
func copyCtx(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	return io.CopyBuffer(w, ctxReader{ctx, r}, make([]byte, 1<<20))
}

// cleanStale removes folders a killed prepare left behind. The caller
// holds the assets lock.
func cleanStale(assets string, log *slog.Logger) {
	ents, err := os.ReadDir(assets)
	if err != nil {
		return
	}
	for _, e := range ents {
		if atomicfile.IsTemp(e.Name()) {
			p := filepath.Join(assets, e.Name())
			if err := os.RemoveAll(p); err != nil {
				log.Warn("cannot remove a stale prepare folder", "dir", p, "err", err)
			}
		}
	}
}

// swapDir puts the folder tmp in place of final, replacing a folder
// already there. Between the two renames final is briefly missing.
func swapDir(tmp, final string) error {
	parent := filepath.Dir(final)
	if err := atomicfile.SyncDir(tmp); err != nil {
		return err
	}
	old := ""
	if _, err := os.Lstat(final); err == nil {
		o, err := os.MkdirTemp(parent, atomicfile.TempPrefix+"old-"+filepath.Base(final)+"-")
		if err != nil {
			return err
		}
		if err := os.Remove(o); err != nil {
			return err
		}
		if err := os.Rename(final, o); err != nil {
			return err
		}
		old = o
	}
	if err := os.Rename(tmp, final); err != nil {
		if old != "" {
			_ = os.Rename(old, final)
		}
		return err
	}
	if err := atomicfile.SyncDir(parent); err != nil {
		return err
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}
