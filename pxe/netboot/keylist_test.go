package netboot

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestKeyListFindsTheOldestLikeAScan drives a keyList and a plain map
// with the same random touches and removals, times mostly in order and
// some out of it: the list's oldest key other than keep always has the
// time a scan of the map finds, and the list is in time order.
func TestKeyListFindsTheOldestLikeAScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h keyList
	want := map[string]time.Time{}
	base := time.Unix(1_700_000_000, 0)
	for i := range 20000 {
		key := fmt.Sprintf("k%d", rng.IntN(300))
		switch rng.IntN(4) {
		case 0:
			h.remove(key)
			delete(want, key)
		default:
			at := base.Add(time.Duration(i) * time.Millisecond)
			if rng.IntN(8) == 0 {
				at = base.Add(time.Duration(rng.IntN(i+1)) * time.Millisecond)
			}
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
		if n := checkKeyList(t, &h); n != len(want) || h.len() != len(want) {
			t.Fatalf("step %d: list holds %d items (%d indexed), want %d", i, n, h.len(), len(want))
		}
	}
}

// checkKeyList fails t unless l's links agree both ways and its times
// are in order; it returns how many items the list links.
func checkKeyList(t *testing.T, l *keyList) int {
	t.Helper()
	n := 0
	var prev *keyItem
	for it := l.head; it != nil; it = it.next {
		if it.prev != prev || l.index[it.key] != it || (prev != nil && prev.last.After(it.last)) {
			t.Fatalf("item %d (%s) is out of place", n, it.key)
		}
		prev, n = it, n+1
	}
	if l.tail != prev {
		t.Fatalf("tail is not the last item")
	}
	return n
}

// TestKeyListStormAllocatesNoItem: a new key for each touch, the oldest
// removed each time, as a storm of new MAC addresses does, reuses the
// removed key's item.
func TestKeyListStormAllocatesNoItem(t *testing.T) {
	var l keyList
	keys := make([]string, 2048)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	base := time.Unix(1_700_000_000, 0)
	for i := range 1024 {
		l.touch(keys[i], base.Add(time.Duration(i)))
	}
	i := 1024
	n := testing.AllocsPerRun(500, func() {
		old, _ := l.oldestExcept("")
		l.remove(old)
		l.touch(keys[i%len(keys)], base.Add(time.Duration(i)))
		i++
	})
	if n != 0 {
		t.Errorf("a touch of a new key after a removal allocates %v times, want 0", n)
	}
	if l.len() != 1024 {
		t.Errorf("list holds %d keys, want 1024", l.len())
	}
}

// len is how many keys l holds.
func (l *keyList) len() int { return len(l.index) }
