package bootassets

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
)

// inspectedISO describes a Proxmox installer ISO, as [inspectISO] reads it.
type inspectedISO struct {
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

// inspectISO reads what [Prepare] would read from the ISO at path, without
// writing anything. Errors wrap [ErrNotAutoInstallISO] for a file that is
// not an auto-install capable Proxmox ISO.
func inspectISO(ctx context.Context, path string) (*inspectedISO, error) {
	im, f, err := openISOFile(path)
	var pe *isoParseError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("inspect %s: %w: %w", path, ErrNotAutoInstallISO, err)
	}
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	defer f.Close()
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
	out := &inspectedISO{Release: info.Release, Product: info.Product, ProductLong: info.ProductLong,
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
