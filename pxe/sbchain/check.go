package sbchain

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Pieces of a chain, as [PieceError] names them.
const (
	PieceShim   = "shim"
	PieceGrub   = "grub"
	PieceKernel = "kernel"
)

// PieceError is a chain that cannot boot under Secure Boot, naming the
// piece that is wrong and why.
type PieceError struct {
	// Piece is [PieceShim], [PieceGrub] or [PieceKernel].
	Piece string
	// Reason says what is wrong, in a sentence.
	Reason string
	// Err is the error behind it, if any.
	Err error
}

// Error names the piece and the reason.
func (e *PieceError) Error() string {
	msg := e.Piece + ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the error behind the refusal.
func (e *PieceError) Unwrap() error { return e.Err }

// Chain is the three images a Secure Boot netboot runs, in order.
type Chain struct {
	Shim, Grub, Kernel []byte
}

// Report is what [Check] read of a chain that can boot.
type Report struct {
	// ShimSigners, GrubSigners and KernelSigners are the common names of
	// each image's signers.
	ShimSigners, GrubSigners, KernelSigners []string
	// Vendor is the common name of the certificate the shim carries;
	// empty when it carries none.
	Vendor string
	// GrubModules are the modules built into grub.
	GrubModules []string
	// GrubHTTP reports that grub carries the http module, so it can fetch
	// the kernel and initrd over HTTP; without it they go by TFTP.
	GrubHTTP bool
	// MOKNeeded lists the pieces whose signer the shim does not carry:
	// the machine's MOK list must hold their signer's certificate (an
	// enrolment with mokutil, confirmed at the console once).
	MOKNeeded []string
	// Warnings say what the operator must do, in sentences.
	Warnings []string
}

// Check reads a chain the way firmware and shim will judge it. A shim or
// grub without a signature, or a grub without the network modules
// (networkModules), is a [*PieceError]: the chain cannot boot. A grub
// or kernel whose signer the shim's vendor certificate did not issue is a
// warning in the report (MOKNeeded): it boots once its signer is
// enrolled as a MOK. An unsigned kernel is refused too: shim's loader
// protocol refuses it under Secure Boot.
func Check(c Chain) (*Report, error) {
	r := &Report{}
	shim, err := Signatures(c.Shim)
	if err != nil {
		return nil, &PieceError{Piece: PieceShim, Reason: "not signed: firmware with Secure Boot on refuses to run it", Err: err}
	}
	r.ShimSigners = names(shim)
	vendor, err := vendorCert(c.Shim)
	if err == nil {
		r.Vendor = vendor.Subject.CommonName
	} else if !errors.Is(err, ErrNoVendorCert) {
		return nil, &PieceError{Piece: PieceShim, Reason: "its vendor certificate cannot be read", Err: err}
	}
	grub, err := Signatures(c.Grub)
	if err != nil {
		return nil, &PieceError{Piece: PieceGrub, Reason: "not signed: shim refuses to run it under Secure Boot", Err: err}
	}
	r.GrubSigners = names(grub)
	mods, err := GrubModules(c.Grub)
	if err != nil {
		return nil, &PieceError{Piece: PieceGrub, Reason: "not a grub image whose modules can be read", Err: err}
	}
	r.GrubModules = mods
	var missing []string
	for _, m := range networkModules() {
		if !slices.Contains(mods, m) {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		return nil, &PieceError{Piece: PieceGrub, Reason: fmt.Sprintf("it lacks the network modules %s, so it cannot netboot (under Secure Boot grub loads no module from elsewhere)", strings.Join(missing, ", "))}
	}
	r.GrubHTTP = slices.Contains(mods, "http")
	kernel, err := Signatures(c.Kernel)
	if err != nil {
		return nil, &PieceError{Piece: PieceKernel, Reason: "not signed: shim refuses to start it under Secure Boot", Err: err}
	}
	r.KernelSigners = names(kernel)
	for _, p := range []struct {
		piece string
		sigs  []Signature
	}{{PieceGrub, grub}, {PieceKernel, kernel}} {
		if vendor != nil && signedBy(p.sigs, vendor) {
			continue
		}
		r.MOKNeeded = append(r.MOKNeeded, p.piece)
		carried := "no vendor certificate"
		if vendor != nil {
			carried = "the vendor certificate " + quote(vendor.Subject.CommonName)
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("the %s's signer %s is not carried by the shim (%s): enrol its certificate as a MOK on each machine (mokutil --import, confirmed at the console) or it will not boot with Secure Boot on",
			p.piece, quote(strings.Join(names(p.sigs), ", ")), carried))
	}
	return r, nil
}

func names(sigs []Signature) []string {
	var out []string
	for _, s := range sigs {
		out = append(out, s.signerName())
	}
	return out
}

func quote(s string) string { return "\"" + s + "\"" }
