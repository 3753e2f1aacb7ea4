package sbchain

import (
	"os"
	"testing"
)

// FuzzReadImage feeds arbitrary bytes (seeded with Debian's chain when it
// is installed) to every reader of this package: none may panic, and a
// signature read must name its certificates.
func FuzzReadImage(f *testing.F) {
	for _, p := range []string{debianShim, debianGrubNet} {
		if b, err := os.ReadFile(p); err == nil && len(b) < 8<<20 {
			f.Add(b[:min(len(b), 64<<10)])
		}
	}
	f.Add([]byte("MZ"))
	f.Fuzz(func(t *testing.T, b []byte) {
		sigs, err := Signatures(b)
		if err == nil && len(sigs) == 0 {
			t.Fatal("Signatures: no error and no signature")
		}
		vendorCert(b)
		GrubModules(b)
		Check(Chain{Shim: b, Grub: b, Kernel: b})
	})
}
