// Package sbchain reads a UEFI Secure Boot chain the way the firmware and
// shim will judge it: the Authenticode signatures of PE images (shim,
// grub, a kernel), the vendor certificate a shim carries, and the modules
// built into a grub image, and tells a chain that cannot boot (an
// unsigned shim or grub, a grub without network modules) from one that
// needs a MOK enrolment (a kernel or grub whose signer the shim does not
// carry).
//
// It reads signatures and certificates with the standard library
// (debug/pe, encoding/asn1, crypto/x509); it does not recompute an
// image's Authenticode digest, which the firmware and shim do, and it
// knows no firmware's key database beyond what the caller says.
package sbchain
