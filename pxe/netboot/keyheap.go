package netboot

import (
	"container/heap"
	"time"
)

// keyHeap is a min-heap of keys by time, with an index by key: touch,
// remove and finding the oldest are O(log n), where a scan of every key
// on each event made a network full of PXE clients cost O(n) a packet.
// The zero value is empty and ready.
type keyHeap struct {
	items []*keyItem
	index map[string]*keyItem
}

type keyItem struct {
	key  string
	last time.Time
	pos  int
}

// touch sets key's time, adding the key when it is new.
func (h *keyHeap) touch(key string, last time.Time) {
	if it, ok := h.index[key]; ok {
		if !it.last.Equal(last) {
			it.last = last
			heap.Fix((*keyItems)(h), it.pos)
		}
		return
	}
	if h.index == nil {
		h.index = map[string]*keyItem{}
	}
	it := &keyItem{key: key, last: last}
	h.index[key] = it
	heap.Push((*keyItems)(h), it)
}

// remove forgets key, if held.
func (h *keyHeap) remove(key string) {
	if it, ok := h.index[key]; ok {
		heap.Remove((*keyItems)(h), it.pos)
		delete(h.index, key)
	}
}

// oldestExcept returns the key of the oldest time other than keep.
func (h *keyHeap) oldestExcept(keep string) (string, bool) {
	switch {
	case len(h.items) == 0:
		return "", false
	case h.items[0].key != keep:
		return h.items[0].key, true
	}
	// The root is keep: the next oldest is one of its children.
	best := -1
	for _, c := range []int{1, 2} {
		if c < len(h.items) && (best < 0 || h.items[c].last.Before(h.items[best].last)) {
			best = c
		}
	}
	if best < 0 {
		return "", false
	}
	return h.items[best].key, true
}

// keyItems is keyHeap as a heap.Interface.
type keyItems keyHeap

func (h *keyItems) Len() int           { return len(h.items) }
func (h *keyItems) Less(i, j int) bool { return h.items[i].last.Before(h.items[j].last) }
func (h *keyItems) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].pos, h.items[j].pos = i, j
}
func (h *keyItems) Push(x any) {
	it := x.(*keyItem)
	it.pos = len(h.items)
	h.items = append(h.items, it)
}
func (h *keyItems) Pop() any {
	n := len(h.items)
	it := h.items[n-1]
	h.items[n-1] = nil
	h.items = h.items[:n-1]
	return it
}
