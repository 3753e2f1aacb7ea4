package folder

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// A consumption writes its record before it takes the lock; under the
// lock it puts that record in place only when the registration is still
// the one it was made from. One registered again in between (a new MAC)
// is consumed as it is now, and no temporary file is left either way.
func TestConsumeUsesItsStagedRecordOnlyForTheSameRegistration(t *testing.T) {
	for _, tc := range []struct {
		name    string
		between func(t *testing.T, g *Registrations)
		wantMAC string
	}{
		{"unchanged", func(*testing.T, *Registrations) {}, "aa:bb:cc:dd:ee:01"},
		{"registered again", func(t *testing.T, g *Registrations) {
			if _, err := g.Put(context.Background(), registry.Registration{Name: "node1", MACs: []string{"aa:bb:cc:dd:ee:02"}, Created: created}); err != nil {
				t.Fatal(err)
			}
		}, "aa:bb:cc:dd:ee:02"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			g, _ := testRegistry(t)
			if _, err := g.Put(ctx, registry.Registration{Name: "node1", MACs: []string{"aa:bb:cc:dd:ee:01"}, Created: created}); err != nil {
				t.Fatal(err)
			}
			rec := registry.ConsumeRecord{Time: time.Date(2026, 7, 7, 8, 30, 0, 0, time.UTC), ClientIP: "10.0.0.9"}
			claim, err := claimName(g.pendingPath("node1"))
			if err != nil {
				t.Fatal(err)
			}
			pre := g.prestage(g.pendingPath("node1"), claim, "node1", func(r *registry.Registration) error {
				r.Consumed = &rec
				return nil
			})
			if pre == nil {
				t.Fatal("nothing staged")
			}
			tc.between(t, g)
			got, err := g.consumeLocked(ctx, "node1", claim, &rec, pre)
			pre.discard()
			if err != nil {
				t.Fatal(err)
			}
			want := registry.Registration{Name: "node1", MACs: []string{tc.wantMAC}, Created: created, Consumed: &rec}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("consumed (-want +got):\n%s", diff)
			}
			onDisk, err := g.readFile(g.consumedPath("node1"), "node1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, onDisk); diff != "" {
				t.Errorf("the consumed file (-want +got):\n%s", diff)
			}
			ents, err := os.ReadDir(g.Dir())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if n := e.Name(); strings.Contains(n, ".tmp-") || strings.Contains(n, claimInfix) {
					t.Errorf("left behind: %s", n)
				}
			}
		})
	}
}
