package sbchain

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Debian's signed pieces (packages shim-signed, grub-efi-amd64-signed)
// and the unsigned shim beside them (shim-unsigned, a dependency).
const (
	debianShim         = "/usr/lib/shim/shimx64.efi.signed"
	debianShimUnsigned = "/usr/lib/shim/shimx64.efi"
	debianGrubNet      = "/usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed"
	debianGrubDisk     = "/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed"
)

func readOrSkip(t *testing.T, path, pkg string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		if os.Getenv("PLASMA_E2E") != "" {
			t.Fatalf("%s (Debian package %s): %v", path, pkg, err)
		}
		t.Skipf("%s (Debian package %s): %v", path, pkg, err)
	}
	return b
}

// debianKernel is the Debian-signed kernel .ci/tools.sh unpacks.
func debianKernel(t *testing.T) []byte {
	dir := os.Getenv("PLASMA_KERNEL_DIR")
	if dir == "" {
		dir = "../../.tools/kernel-v2"
	}
	return readOrSkip(t, dir+"/vmlinuz", "linux-image-amd64, by .ci/tools.sh")
}

func TestSignaturesOfDebiansChain(t *testing.T) {
	shim := readOrSkip(t, debianShim, "shim-signed")
	sigs, err := Signatures(shim)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Microsoft Windows UEFI Driver Publisher", "Microsoft UEFI CA 2023 signer"}, names(sigs)); diff != "" {
		t.Errorf("shim signers (-want +got):\n%s", diff)
	}
	if sigs[0].Signer.Issuer.CommonName != "Microsoft Corporation UEFI CA 2011" {
		t.Errorf("shim's first signer issued by %q", sigs[0].Signer.Issuer.CommonName)
	}
	vendor, err := vendorCert(shim)
	if err != nil || vendor.Subject.CommonName != "Debian Secure Boot CA" {
		t.Fatalf("vendor cert %v, %v; want Debian Secure Boot CA", vendor, err)
	}
	grub := readOrSkip(t, debianGrubNet, "grub-efi-amd64-signed")
	gs, err := Signatures(grub)
	if err != nil || gs[0].signerName() != "Debian Secure Boot Signer 2022 - grub2" || !signedBy(gs, vendor) {
		t.Errorf("grub: %v %v, signed by the vendor %v", names(gs), err, signedBy(gs, vendor))
	}
	if signedBy(sigs, vendor) {
		t.Error("the shim is taken as signed by its own vendor certificate")
	}
	if _, err := Signatures(readOrSkip(t, debianShimUnsigned, "shim-unsigned")); !errors.Is(err, ErrUnsigned) {
		t.Errorf("unsigned shim: %v; want ErrUnsigned", err)
	}
	if _, err := Signatures([]byte("not a PE file at all, just text")); !errors.Is(err, ErrNotPE) {
		t.Errorf("text: %v; want ErrNotPE", err)
	}
}

// TestSignaturesAgreeWithOsslsigncode cross-checks the signer name and
// serial with osslsigncode's reading of grub (osslsigncode 2.9 reports
// Debian's shim's table, padded with a gap as sbverify warns, as
// corrupted, so the shim is checked against sbverify's figures above).
func TestSignaturesAgreeWithOsslsigncode(t *testing.T) {
	tool, err := exec.LookPath("osslsigncode")
	if err != nil {
		t.Skip("osslsigncode is not installed")
	}
	b := readOrSkip(t, debianGrubNet, "grub-efi-amd64-signed")
	sigs, err := Signatures(b)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(tool, "verify", "-in", debianGrubNet).CombinedOutput()
	serial := strings.ToUpper(sigs[0].Signer.SerialNumber.Text(16))
	for _, want := range []string{"Subject: /CN=" + sigs[0].signerName(), "Issuer : /CN=" + sigs[0].Signer.Issuer.CommonName, "Serial : " + serial} {
		if !strings.Contains(string(out), want) {
			t.Errorf("osslsigncode verify does not say %q:\n%s", want, out)
		}
	}
}

func TestGrubModules(t *testing.T) {
	net, err := GrubModules(readOrSkip(t, debianGrubNet, "grub-efi-amd64-signed"))
	if err != nil {
		t.Fatal(err)
	}
	has := func(mods []string, m string) bool {
		for _, x := range mods {
			if x == m {
				return true
			}
		}
		return false
	}
	// Found in the lab: Debian's network image asks the server for
	// http.mod, which it does not carry.
	if !has(net, "efinet") || !has(net, "tftp") || has(net, "http") || !has(net, "linux") {
		t.Errorf("grubnetx64 modules: %v; want efinet, tftp and linux, not http", net)
	}
	disk, err := GrubModules(readOrSkip(t, debianGrubDisk, "grub-efi-amd64-signed"))
	if err != nil || has(disk, "tftp") || has(disk, "http") {
		t.Errorf("grubx64 (the disk and CD image) modules: %v, %v; want neither tftp nor http", disk, err)
	}
	if _, err := GrubModules(readOrSkip(t, debianShim, "shim-signed")); err == nil {
		t.Error("a shim read as a grub image")
	}
}

func TestCheck(t *testing.T) {
	shim := readOrSkip(t, debianShim, "shim-signed")
	unsignedShim := readOrSkip(t, debianShimUnsigned, "shim-unsigned")
	grub := readOrSkip(t, debianGrubNet, "grub-efi-amd64-signed")
	diskGrub := readOrSkip(t, debianGrubDisk, "grub-efi-amd64-signed")
	kernel := debianKernel(t)
	t.Run("Debian's chain boots without a MOK", func(t *testing.T) {
		r, err := Check(Chain{Shim: shim, Grub: grub, Kernel: kernel})
		if err != nil {
			t.Fatal(err)
		}
		if r.Vendor != "Debian Secure Boot CA" || len(r.MOKNeeded) != 0 || len(r.Warnings) != 0 || r.GrubHTTP {
			t.Errorf("report: %+v", r)
		}
		if diff := cmp.Diff([]string{"Debian Secure Boot Signer 2022 - linux"}, r.KernelSigners); diff != "" {
			t.Errorf("kernel signers (-want +got):\n%s", diff)
		}
	})
	refusals := map[string]struct {
		chain Chain
		piece string
		says  string
	}{
		"an unsigned shim is refused, named":         {Chain{Shim: unsignedShim, Grub: grub, Kernel: kernel}, PieceShim, "not signed"},
		"an unsigned grub is refused, named":         {Chain{Shim: shim, Grub: unsignedShim, Kernel: kernel}, PieceGrub, "not signed"},
		"a grub without network modules is refused":  {Chain{Shim: shim, Grub: diskGrub, Kernel: kernel}, PieceGrub, "lacks the network modules tftp"},
		"an unsigned kernel is refused, named":       {Chain{Shim: shim, Grub: grub, Kernel: unsignedShim}, PieceKernel, "not signed"},
		"a kernel that is not a PE image is refused": {Chain{Shim: shim, Grub: grub, Kernel: []byte("x")}, PieceKernel, "not signed"},
	}
	for name, tc := range refusals {
		t.Run(name, func(t *testing.T) {
			_, err := Check(tc.chain)
			var pe *PieceError
			if !errors.As(err, &pe) || pe.Piece != tc.piece || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Check: %v; want the %s named with %q", err, tc.piece, tc.says)
			}
		})
	}
	t.Run("a kernel the shim does not carry the signer of needs a MOK", func(t *testing.T) {
		// The shim itself stands in for a kernel signed by Microsoft,
		// whose signer Debian's shim does not carry.
		r, err := Check(Chain{Shim: shim, Grub: grub, Kernel: shim})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{PieceKernel}, r.MOKNeeded); diff != "" || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "MOK") {
			t.Errorf("MOKNeeded (-want +got):\n%s\nwarnings %q", diff, r.Warnings)
		}
	})
}

// TestNetworkModulesCannotBeChanged: the modules Check asks of a grub
// are not package state: changing the slice returned changes nothing
// the next call or Check sees.
func TestNetworkModulesCannotBeChanged(t *testing.T) {
	m := networkModules()
	m[0], m[1] = "normal", "linux"
	if diff := cmp.Diff([]string{"efinet", "tftp"}, networkModules()); diff != "" {
		t.Errorf("networkModules after a caller changed its slice (-want +got):\n%s", diff)
	}
}
