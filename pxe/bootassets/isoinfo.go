package bootassets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
)

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

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
