package folder

import (
	"context"
	"fmt"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// storeWith returns a store holding n pending registrations, each
// pinning its own MAC.
func storeWith(b *testing.B, n int) *Registrations {
	b.Helper()
	g, err := OpenRegistrations(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		r := registry.Registration{Name: fmt.Sprintf("n%04d", i), MACs: []string{fmt.Sprintf("52:54:00:00:%02x:%02x", i/256, i%256)}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}}
		if _, err := g.Register(context.Background(), r, registry.RegisterOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	return g
}

// BenchmarkScan1000 is one scan of 1000 pending registrations: what each
// boot script lookup and each registration's pin check costs.
func BenchmarkScan1000(b *testing.B) {
	g := storeWith(b, 1000)
	b.ResetTimer()
	for b.Loop() {
		if rs, _, err := g.Scan(context.Background()); err != nil || len(rs) != 1000 {
			b.Fatal(len(rs), err)
		}
	}
}

// BenchmarkRegisterBeside1000 registers (and removes) one more beside
// 1000 pending registrations.
func BenchmarkRegisterBeside1000(b *testing.B) {
	g := storeWith(b, 1000)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		r := registry.Registration{Name: "extra", MACs: []string{"52:54:00:ff:ff:ff"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}}
		if _, err := g.Register(ctx, r, registry.RegisterOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := g.Delete(ctx, "extra"); err != nil {
			b.Fatal(err)
		}
	}
}
