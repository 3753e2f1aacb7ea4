package bootassets

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/sbchain"
)

// Debian's chain (shim-signed, grub-efi-amd64-signed; shim-unsigned comes
// with them) and its signed kernel (unpacked by .ci/tools.sh).
const (
	debShim         = "/usr/lib/shim/shimx64.efi.signed"
	debShimUnsigned = "/usr/lib/shim/shimx64.efi"
	debGrubNet      = "/usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed"
	debGrubDisk     = "/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed"
)

func readOrSkip(t *testing.T, path, pkg string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		if os.Getenv("PLASMA_E2E") != "" {
			t.Fatalf("%s (%s): %v", path, pkg, err)
		}
		t.Skipf("%s (%s): %v", path, pkg, err)
	}
	return b
}

func debKernel(t *testing.T) []byte {
	dir := os.Getenv("PLASMA_KERNEL_DIR")
	if dir == "" {
		dir = "../../.tools/kernel-v2"
	}
	return readOrSkip(t, filepath.Join(dir, "vmlinuz"), "Debian's kernel, unpacked by .ci/tools.sh")
}

// sbISO is a Proxmox-layout ISO whose kernel is kernel and whose EFI boot
// files, as a Proxmox ISO keeps them, are shim and grub (none when nil).
func sbISO(t *testing.T, kernel, shim, grub []byte) string {
	files := proxmoxLayout(t, testInitrd(t, "gzip", testInit(t)))
	files["boot/linux26"] = kernel
	if shim != nil {
		files["EFI/BOOT/BOOTX64.EFI"] = shim
		files["EFI/BOOT/grubx64.efi"] = grub
	}
	return buildISO(t, files, isoOpts{name: "proxmox-ve_9.2-1.iso"})
}

func chainFolder(t *testing.T, shim, grub []byte) string {
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "shimx64.efi.signed"), shim, 0o644)
	os.WriteFile(filepath.Join(d, "grubnetx64.efi.signed"), grub, 0o644)
	return d
}

func TestPrepareTakesTheISOsSecureBootChain(t *testing.T) {
	shim, grub, kernel := readOrSkip(t, debShim, "shim-signed"), readOrSkip(t, debGrubNet, "grub-efi-amd64-signed"), debKernel(t)
	state := t.TempDir()
	rel, err := Prepare(context.Background(), PrepareOptions{ISO: sbISO(t, kernel, shim, grub), StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	want := &SecureBootChain{Source: ChainFromISO, From: "/EFI/BOOT/BOOTX64.EFI, /EFI/BOOT/grubx64.efi",
		ShimSigners: []string{"Microsoft Windows UEFI Driver Publisher", "Microsoft UEFI CA 2023 signer"},
		GrubSigners: []string{"Debian Secure Boot Signer 2022 - grub2"}, KernelSigners: []string{"Debian Secure Boot Signer 2022 - linux"},
		Vendor: "Debian Secure Boot CA"}
	if diff := cmp.Diff(want, rel.SecureBoot); diff != "" {
		t.Errorf("chain (-want +got):\n%s", diff)
	}
	for name, data := range map[string][]byte{AssetShim: shim, AssetGrub: grub} {
		if got := readFile(t, filepath.Join(rel.Dir, name)); string(got) != string(data) {
			t.Errorf("%s differs from the ISO's", name)
		}
	}
	if _, err := VerifyRelease(context.Background(), rel.Dir); err != nil {
		t.Errorf("the manifest does not cover the chain: %v", err)
	}
	back, err := ReadRelease(context.Background(), rel.Dir)
	if err != nil || back.SecureBoot == nil || back.SecureBoot.Source != ChainFromISO {
		t.Errorf("manifest read back: %+v, %v", back, err)
	}
}

func TestPrepareSecureBootChainRefusals(t *testing.T) {
	shim, grub, kernel := readOrSkip(t, debShim, "shim-signed"), readOrSkip(t, debGrubNet, "grub-efi-amd64-signed"), debKernel(t)
	unsigned, diskGrub := readOrSkip(t, debShimUnsigned, "shim-unsigned"), readOrSkip(t, debGrubDisk, "grub-efi-amd64-signed")
	t.Run("an ISO whose grub has no network modules stages no chain, with a warning", func(t *testing.T) {
		rel, err := Prepare(context.Background(), PrepareOptions{ISO: sbISO(t, kernel, shim, diskGrub), StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if rel.SecureBoot != nil || !strings.Contains(strings.Join(rel.Warnings, "\n"), "lacks the network modules tftp") {
			t.Errorf("chain %+v, warnings %q", rel.SecureBoot, rel.Warnings)
		}
		if _, err := os.Stat(filepath.Join(rel.Dir, AssetShim)); err == nil {
			t.Error("a shim was staged for a chain that cannot netboot")
		}
	})
	t.Run("an ISO grub over the size bound stages no chain, with a warning saying why", func(t *testing.T) {
		rel, err := Prepare(context.Background(), PrepareOptions{ISO: sbISO(t, kernel, shim, make([]byte, maxChainFile+1)), StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		warnings := strings.Join(rel.Warnings, "\n")
		if rel.SecureBoot != nil || !strings.Contains(warnings, "the ISO's Secure Boot chain cannot be read") || !strings.Contains(warnings, "/EFI/BOOT/grubx64.efi is 67108865 bytes") {
			t.Errorf("chain %+v, warnings %q", rel.SecureBoot, rel.Warnings)
		}
		if _, err := os.Stat(filepath.Join(rel.Dir, AssetShim)); err == nil {
			t.Error("a shim was staged without its grub")
		}
	})
	t.Run("a folder chain replaces the ISO's", func(t *testing.T) {
		rel, err := Prepare(context.Background(), PrepareOptions{ISO: sbISO(t, kernel, shim, diskGrub), StateDir: t.TempDir(), SecureBootDir: chainFolder(t, shim, grub)})
		if err != nil {
			t.Fatal(err)
		}
		if rel.SecureBoot == nil || rel.SecureBoot.Source != ChainFromFolder || len(rel.SecureBoot.MOKNeeded) != 0 {
			t.Errorf("chain %+v", rel.SecureBoot)
		}
	})
	t.Run("a kernel the shim does not carry the signer of is a MOK warning", func(t *testing.T) {
		// Microsoft-signed shim bytes stand in for a kernel signed by a key
		// Debian's shim does not carry (as the Proxmox kernel is to it).
		rel, err := Prepare(context.Background(), PrepareOptions{ISO: sbISO(t, shim, nil, nil), StateDir: t.TempDir(), SecureBootDir: chainFolder(t, shim, grub)})
		if err != nil {
			t.Fatal(err)
		}
		if rel.SecureBoot == nil || !cmp.Equal(rel.SecureBoot.MOKNeeded, []string{"kernel"}) || !strings.Contains(strings.Join(rel.Warnings, "\n"), "MOK") {
			t.Errorf("chain %+v, warnings %q", rel.SecureBoot, rel.Warnings)
		}
	})
	for name, tc := range map[string]struct {
		shim, grub []byte
		piece      string
	}{
		"an unsigned shim in the folder is refused, naming the shim": {unsigned, grub, sbchain.PieceShim},
		"an unsigned grub in the folder is refused, naming the grub": {shim, unsigned, sbchain.PieceGrub},
		"a grub without network modules is refused, naming it":       {shim, diskGrub, sbchain.PieceGrub},
	} {
		t.Run(name, func(t *testing.T) {
			state := t.TempDir()
			_, err := Prepare(context.Background(), PrepareOptions{ISO: sbISO(t, kernel, nil, nil), StateDir: state, SecureBootDir: chainFolder(t, tc.shim, tc.grub)})
			var pe *sbchain.PieceError
			if !errors.As(err, &pe) || pe.Piece != tc.piece {
				t.Fatalf("Prepare: %v; want the %s named", err, tc.piece)
			}
			if _, err := os.Stat(filepath.Join(state, AssetsDir, "9.2-1")); err == nil {
				t.Error("a release was staged with a broken chain")
			}
		})
	}
	t.Run("a folder without a grub is refused, naming what it looked for", func(t *testing.T) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "shimx64.efi"), shim, 0o644)
		_, err := Prepare(context.Background(), PrepareOptions{ISO: sbISO(t, kernel, nil, nil), StateDir: t.TempDir(), SecureBootDir: d})
		if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "grubnetx64.efi.signed") {
			t.Errorf("Prepare: %v", err)
		}
	})
}
