package netboot

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestKeyHeapFindsTheOldestLikeAScan drives a keyHeap and a plain map
// with the same random touches and removals: the heap's oldest key other
// than keep always has the time a scan of the map finds.
func TestKeyHeapFindsTheOldestLikeAScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h keyHeap
	want := map[string]time.Time{}
	base := time.Unix(1_700_000_000, 0)
	for i := range 20000 {
		key := fmt.Sprintf("k%d", rng.IntN(300))
		switch rng.IntN(4) {
		case 0:
			h.remove(key)
			delete(want, key)
		default:
			at := base.Add(time.Duration(rng.IntN(5000)) * time.Millisecond)
			h.touch(key, at)
			want[key] = at
		}
		keep := fmt.Sprintf("k%d", rng.IntN(300))
		got, ok := h.oldestExcept(keep)
		var oldest time.Time
		found := false
		for k, at := range want {
			if k != keep && (!found || at.Before(oldest)) {
				oldest, found = at, true
			}
		}
		if ok != found {
			t.Fatalf("step %d: oldestExcept(%s) found %v, a scan %v", i, keep, ok, found)
		}
		if ok && (got == keep || !want[got].Equal(oldest)) {
			t.Fatalf("step %d: oldestExcept(%s) = %s at %v, a scan finds %v", i, keep, got, want[got], oldest)
		}
		if len(h.items) != len(want) || len(h.index) != len(want) {
			t.Fatalf("step %d: heap holds %d items (%d indexed), want %d", i, len(h.items), len(h.index), len(want))
		}
	}
}
