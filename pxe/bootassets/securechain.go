package bootassets

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/sbchain"
)

// Names of the Secure Boot chain in a release folder, the names the
// window offers (shim) and shim loads (grub, from the folder it was
// loaded from).
const (
	// AssetShim is the chain's shim, signed by Microsoft's UEFI CA.
	AssetShim = "shimx64.efi"
	// AssetGrub is the chain's grub: network-capable, signed by a key
	// the shim trusts (or a MOK).
	AssetGrub = "grubx64.efi"
)

// Where a Proxmox ISO keeps its EFI boot files, in the ISO 9660 tree, as
// [Prepare] looks for them: the removable-media path UEFI boots a CD by
// (BOOTX64.EFI, the shim) and the grub beside it. Not verified against a
// real Proxmox ISO here; an ISO that keeps them only inside its El Torito
// EFI image gets no chain from prepare and needs a chain folder.
const (
	isoEFIShim = "/EFI/BOOT/BOOTX64.EFI"
	isoEFIGrub = "/EFI/BOOT/grubx64.efi"
)

// maxChainFile bounds each piece of a chain read (they are a few MiB).
const maxChainFile = 64 << 20

// Sources of a [SecureBootChain].
const (
	// ChainFromISO: the ISO's own EFI boot files.
	ChainFromISO = "iso"
	// ChainFromFolder: the folder the operator named.
	ChainFromFolder = "folder"
)

// SecureBootChain is what prepare staged for a Secure Boot netboot:
// [AssetShim] and [AssetGrub] in the release folder, with the kernel
// ([AssetKernel]) as the third piece.
type SecureBootChain struct {
	// Source is [ChainFromISO] or [ChainFromFolder]; From names the
	// files read.
	Source string `json:"source"`
	From   string `json:"from"`
	// ShimSigners, GrubSigners and KernelSigners are each piece's
	// signers' common names; Vendor the shim's vendor certificate.
	ShimSigners   []string `json:"shim_signers"`
	GrubSigners   []string `json:"grub_signers"`
	KernelSigners []string `json:"kernel_signers"`
	Vendor        string   `json:"vendor,omitempty"`
	// GrubHTTP reports that grub has the http module; without it grub
	// fetches the kernel and initrd by TFTP.
	GrubHTTP bool `json:"grub_http"`
	// MOKNeeded lists the pieces whose signer the shim does not carry:
	// each machine needs that certificate enrolled as a MOK.
	MOKNeeded []string `json:"mok_needed,omitempty"`
}

// chainFolderNames are the names a chain folder's pieces may have: the
// window's own, or as Debian's packages ship them.
var chainFolderNames = map[string][]string{
	AssetShim: {AssetShim, "shimx64.efi.signed", "BOOTX64.EFI"},
	AssetGrub: {AssetGrub, "grubnetx64.efi.signed"},
}

// secureBoot stages the release's Secure Boot chain into dir, from the
// folder the options name or from the ISO's EFI boot files, checked with
// the kernel already in dir. A chain folder that is broken is an error
// naming the piece; an ISO whose chain cannot netboot is a note, and the
// release has no chain.
func (p *preparer) secureBoot(im *isoImage, dir string) error {
	var shim, grub []byte
	var chain SecureBootChain
	var err error
	if folder := p.opts.SecureBootDir; folder != "" {
		chain = SecureBootChain{Source: ChainFromFolder, From: folder}
		if shim, err = readPiece(folder, AssetShim); err != nil {
			return fmt.Errorf("Secure Boot chain folder: %w", err)
		}
		if grub, err = readPiece(folder, AssetGrub); err != nil {
			return fmt.Errorf("Secure Boot chain folder: %w", err)
		}
	} else {
		shim, err = im.readFile(isoEFIShim, maxChainFile)
		if err == nil {
			grub, err = im.readFile(isoEFIGrub, maxChainFile)
		}
		if errors.Is(err, fs.ErrNotExist) {
			p.prog.note("no Secure Boot chain: the ISO has no " + isoEFIShim + " and " + isoEFIGrub + "; give a chain folder for Secure Boot machines")
			return nil
		}
		if err != nil {
			p.warn("the ISO's Secure Boot chain cannot be read; give a chain folder (a Microsoft-signed shim and a signed network grub) for Secure Boot machines", "reason", err.Error())
			return nil
		}
		chain = SecureBootChain{Source: ChainFromISO, From: isoEFIShim + ", " + isoEFIGrub}
	}
	kernel, err := regularfile.Read(filepath.Join(dir, AssetKernel), maxChainFile)
	if err != nil {
		return fmt.Errorf("Secure Boot chain: the staged kernel: %w", err)
	}
	r, err := sbchain.Check(sbchain.Chain{Shim: shim, Grub: grub, Kernel: kernel})
	if err != nil {
		if chain.Source == ChainFromISO {
			p.warn("the ISO's Secure Boot chain cannot netboot; give a chain folder (a Microsoft-signed shim and a signed network grub) for Secure Boot machines", "reason", err.Error())
			return nil
		}
		return fmt.Errorf("Secure Boot chain from %s: %w", chain.From, err)
	}
	for _, w := range r.Warnings {
		p.warn(w)
	}
	for _, x := range []struct {
		name string
		data []byte
	}{{AssetShim, shim}, {AssetGrub, grub}} {
		a, err := writeAssetFunc(filepath.Join(dir, x.name), func(w io.Writer) error {
			_, err := w.Write(x.data)
			return err
		}, nil)
		if err != nil {
			return err
		}
		p.rel.Assets = append(p.rel.Assets, a)
	}
	chain.ShimSigners, chain.GrubSigners, chain.KernelSigners = r.ShimSigners, r.GrubSigners, r.KernelSigners
	chain.Vendor, chain.GrubHTTP, chain.MOKNeeded = r.Vendor, r.GrubHTTP, r.MOKNeeded
	p.rel.SecureBoot = &chain
	p.prog.note(fmt.Sprintf("Secure Boot chain from %s: shim by %s, grub by %s, kernel by %s", chain.Source,
		strings.Join(r.ShimSigners, ", "), strings.Join(r.GrubSigners, ", "), strings.Join(r.KernelSigners, ", ")))
	return nil
}

// pieceOf names the chain piece an asset is, as [sbchain.PieceError] does.
var pieceOf = map[string]string{AssetShim: sbchain.PieceShim, AssetGrub: sbchain.PieceGrub}

// readPiece reads a chain piece from folder under one of its names. A
// name that is there but not a regular file (a FIFO, a device, a folder)
// or over [maxChainFile] is a [*sbchain.PieceError] naming the piece: it
// is not read on, nor passed over for the next name.
func readPiece(folder, asset string) ([]byte, error) {
	for _, n := range chainFolderNames[asset] {
		b, err := regularfile.Read(filepath.Join(folder, n), maxChainFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case errors.Is(err, regularfile.ErrNotRegular):
			return nil, &sbchain.PieceError{Piece: pieceOf[asset], Reason: "not a regular file", Err: err}
		case errors.Is(err, regularfile.ErrTooLarge):
			return nil, &sbchain.PieceError{Piece: pieceOf[asset], Reason: fmt.Sprintf("over %d MiB, larger than any shim or grub", maxChainFile>>20), Err: err}
		case err != nil:
			return nil, fmt.Errorf("%s: %w", pieceOf[asset], err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%s: no %s there (want one of %s): %w", folder, pieceOf[asset], strings.Join(chainFolderNames[asset], ", "), fs.ErrNotExist)
}
