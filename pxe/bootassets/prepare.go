package bootassets

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

// Errors returned by [Prepare], [ReadRelease], [VerifyRelease] and
// [ListReleases]; compare with errors.Is.
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
	// ErrBusy: another prepare, in this process or another, is staging
	// into the same state dir; the error names it. Try again when it is
	// done.
	ErrBusy = errors.New("another prepare is staging into this state dir")
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
	// Generic bakes a mode file with mode "http" and no URL or
	// fingerprint, as "prepare-iso --fetch-from http" without --url
	// writes it (needs xorriso): the installer then takes its answer URL
	// from the site's DHCP option 250, else from the DNS TXT record
	// proxmox-auto-installer.<search-domain> (see pxe/sitepublish), so one
	// ISO serves every window and every site. The release is named
	// "<release>-generic" unless Release is set, beside a baked one. Not
	// with AnswerURL or CertFingerprint.
	Generic bool
	// CertFingerprint pins the answer server's TLS certificate: its
	// SHA-256 as hex, colons optional, any case (written as "AA:BB:…").
	// [CertFingerprintAuto] takes it from FingerprintFunc. Needs AnswerURL.
	CertFingerprint string
	// FingerprintFunc returns the fingerprint of the certificate kept in
	// the state dir; it is called only when CertFingerprint is "auto".
	FingerprintFunc func() (string, error)
	// AnswerAuthToken, "<name>:<secret>", is baked into the mode file
	// (the [http] table's token, as prepare-iso --answer-auth-token
	// writes it): installers from 9.2 send it as "Authorization: Bearer
	// <name>:<secret>" and the window then refuses answer requests
	// without it. [AnswerAuthTokenAuto] generates one for the release.
	// Needs AnswerURL. Empty keeps a token the ISO's mode file already
	// holds, and else generates one for a 9.2 or later ISO (as auto);
	// [AnswerAuthTokenNone] bakes none. The token is kept apart, see
	// [AnswerToken].
	AnswerAuthToken string
	// PatchAsk patches the initrd's /init to prompt on the console for the
	// boot disk when the kernel command line holds [AskDiskKernelArg].
	// When the installer's init cannot be read or lacks
	// [InitPatchAnchor], prepare warns and goes on unpatched.
	PatchAsk bool
	// SecureBootDir, when set, is a folder holding the Secure Boot chain
	// to stage instead of the ISO's: a Microsoft-signed shim
	// (shimx64.efi, shimx64.efi.signed or BOOTX64.EFI) and a
	// network-capable grub signed by a key the shim trusts (grubx64.efi
	// or grubnetx64.efi.signed), as Debian's shim-signed and
	// grub-efi-amd64-signed ship them. A broken chain (an unsigned shim
	// or grub, a grub without network modules, an unsigned kernel) is an
	// error naming the piece; a grub or kernel whose signer the shim does
	// not carry is a warning (a MOK enrolment is needed). Empty: the
	// ISO's own EFI boot files, when they can netboot.
	SecureBootDir string
	// DiscoveryAgent, when set, is the discovery agent, a static
	// executable (node-provisioner built with CGO_ENABLED=0): prepare
	// builds [discovery.InitrdName] with it as /init and the storage and
	// network modules of the ISO's kernel, taken from the ISO's
	// <product>-base.squashfs (this needs unsquashfs).
	DiscoveryAgent string
	// Release, when set, names the release folder instead of the name
	// read from the ISO (for example "9.2-1").
	Release string
	// Logger receives progress and warnings as key-values; nil discards.
	Logger *slog.Logger
	// Progress, when set, is called with each step, the bytes of the
	// steps that copy, and each warning, from the goroutine running
	// Prepare (see [Progress]). Nil discards them.
	Progress func(Progress)
}

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
// xorriso is not installed, [ErrBusy] while another prepare runs on the
// same state dir, and ctx's error when it ends first.
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
	prog    reporter
	fp      string // normalised fingerprint
	token   string // the answer token baked or found; a secret
	noToken bool   // AnswerAuthTokenNone: bake none
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
	p := &preparer{opts: opts, log: log, prog: reporter{fn: opts.Progress}}
	if opts.AnswerURL != "" {
		if err := checkAnswerURL(opts.AnswerURL); err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
	}
	if opts.Generic && opts.AnswerURL != "" {
		return nil, errors.New("prepare: a generic ISO has no answer URL: give one or the other")
	}
	if opts.Generic && opts.CertFingerprint != "" {
		return nil, errors.New("prepare: a generic ISO takes the certificate fingerprint from the site's DHCP option 251 or DNS record; one baked in would win over them")
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
	if opts.AnswerAuthToken == AnswerAuthTokenNone {
		p.noToken = true
	} else if opts.AnswerAuthToken != "" {
		if opts.AnswerURL == "" && !opts.Generic {
			return nil, errors.New("prepare: an answer token needs an answer URL to bake it with")
		}
		p.token = opts.AnswerAuthToken
		if p.token == AnswerAuthTokenAuto {
			t, err := newAnswerToken()
			if err != nil {
				return nil, fmt.Errorf("prepare: %w", err)
			}
			p.token = t
		} else if err := checkAnswerToken(p.token); err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
	}
	if opts.Release != "" && !releaseNameRE.MatchString(opts.Release) {
		return nil, fmt.Errorf("prepare: release name %q: want letters, digits, '.', '-', '_' or '+', such as 9.2-1", opts.Release)
	}
	if opts.AnswerURL != "" || opts.Generic {
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
	p.prog.warn(line)
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
	im, size, err := p.inspect(ctx, src)
	if err != nil {
		return nil, err
	}
	final, err := p.install(ctx, im, src, size)
	if err != nil {
		return nil, err
	}
	p.rel.Dir = final
	p.log.Info("release prepared", "release", p.rel.Name, "dir", final, "ask_patched", p.rel.AskPatched)
	p.prog.note(fmt.Sprintf("prepared %s in %s", p.rel.Name, final))
	rel := p.rel
	return &rel, nil
}

// inspect checks that src is a Proxmox installer ISO prepare can serve,
// reads its release and starts p.rel from it. It returns the ISO's image
// and size.
func (p *preparer) inspect(ctx context.Context, src *os.File) (*isoImage, int64, error) {
	st, err := src.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file: %w", p.opts.ISO, ErrNotAutoInstallISO)
	}
	im, err := openISO(src, st.Size())
	if err != nil {
		return nil, 0, fmt.Errorf("read ISO: %w: %w", ErrNotAutoInstallISO, err)
	}
	if err := checkProxmoxISO(im); err != nil {
		return nil, 0, err
	}
	if st.Size() > newcMaxSize {
		return nil, 0, fmt.Errorf("the ISO is %d bytes: a newc initrd entry holds at most 4 GiB", st.Size())
	}
	info, err := readISOInfo(ctx, im, p.opts.ISO, p.opts.Release, initrdScanner{zstd: p.zstd})
	if err != nil {
		return nil, 0, err
	}
	for _, w := range info.warnings {
		p.warn(w)
	}
	name := info.Release
	if p.opts.Generic {
		name += genericSuffix
	}
	if p.opts.Release != "" {
		name = p.opts.Release
	}
	p.rel = Release{Format: manifestFormat, Name: name, Product: info.Product, ProductLong: info.ProductLong,
		Version: info.Version, ISORelease: info.ISORelease, SourceISO: filepath.Base(p.opts.ISO), Warnings: p.rel.Warnings}
	p.log.Info("preparing release", "iso", p.opts.ISO, "release", name, "product", info.ProductLong)
	p.prog.note(fmt.Sprintf("preparing %s %s from %s", orString(info.ProductLong, "Proxmox"), name, filepath.Base(p.opts.ISO)))
	return im, st.Size(), nil
}

// install builds p.rel's assets and manifest in a temporary folder under
// the assets folder, holding its lock, and swaps the folder into place.
// It returns the release's folder.
func (p *preparer) install(ctx context.Context, im *isoImage, src *os.File, srcSize int64) (string, error) {
	assets := filepath.Join(p.opts.StateDir, AssetsDir)
	if err := os.MkdirAll(assets, 0o755); err != nil {
		return "", err
	}
	lock, err := lockfile.TryLock(filepath.Join(assets, ".lock"), "node-provisioner prepare")
	if errors.Is(err, lockfile.ErrLocked) {
		return "", fmt.Errorf("%w: %w", ErrBusy, err)
	}
	if err != nil {
		return "", err
	}
	defer lock.Unlock()
	cleanStale(assets, p.log)

	tmp, err := os.MkdirTemp(assets, atomicfile.TempPrefix+p.rel.Name+"-")
	if err != nil {
		return "", err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := p.build(ctx, im, src, srcSize, tmp); err != nil {
		return "", err
	}
	p.rel.Created = time.Now().UTC().Truncate(time.Second)
	if err := writeManifest(tmp, &p.rel); err != nil {
		return "", err
	}
	final := filepath.Join(assets, p.rel.Name)
	// The token goes first: a crash before the swap leaves the former
	// release with a token it lacks, refused rather than served unchecked.
	if err := keepAnswerToken(p.opts.StateDir, p.rel.Name, p.token); err != nil {
		return "", err
	}
	if err := swapDir(tmp, final); err != nil {
		return "", err
	}
	done = true
	return final, nil
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
	if err := p.secureBoot(im, dir); err != nil {
		return err
	}
	if p.opts.DiscoveryAgent != "" {
		if err := p.buildDiscovery(ctx, im, dir); err != nil {
			return err
		}
	}

	// The ISO the installer will mount.
	isoPath := filepath.Join(dir, AssetISO)
	a, err := copyAsset(ctx, isoPath, io.NewSectionReader(src, 0, srcSize), srcSize, p.prog.counter("copy ISO", srcSize))
	if err != nil {
		return err
	}
	p.rel.SourceSHA256 = a.SHA256
	if p.opts.AnswerURL != "" || p.opts.Generic {
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
	im, f, err := openISOFile(isoPath)
	if err != nil {
		return fmt.Errorf("read prepared ISO: %w", err)
	}
	defer f.Close()
	mode, err := readModeFile(im)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.warn("the ISO has no " + isoModeFile + " and no answer URL was given, so the automated installer has no answer to fetch: prepare with an answer URL, or use an ISO prepared by proxmox-auto-install-assistant")
		return nil
	case err != nil:
		return err
	}
	p.rel.FetchMode, p.rel.AnswerURL, p.rel.CertFingerprint = mode.Mode, mode.HTTP.URL, mode.HTTP.CertFingerprint
	p.token, p.rel.AnswerAuth = mode.HTTP.Token, mode.HTTP.Token != ""
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
