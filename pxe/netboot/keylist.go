package netboot

import "time"

// keyList orders keys by time, oldest first, in a doubly linked list with
// an index by key. A key touched with a time no older than the newest
// (every live event: a storm of new MAC addresses, one a DISCOVER) goes
// to the end in O(1), as do remove and finding the oldest; only an
// out-of-order time (an event ingested from history) walks back from the
// end to its place. It keeps the item of the last key removed for the
// next new key, so that a storm that evicts a key for each new one
// allocates no item. The zero value is empty and ready.
type keyList struct {
	head, tail *keyItem // oldest, newest
	index      map[string]*keyItem
	spare      *keyItem
}

type keyItem struct {
	key        string
	last       time.Time
	prev, next *keyItem
}

// touch sets key's time, adding the key when it is new.
func (l *keyList) touch(key string, last time.Time) {
	it, ok := l.index[key]
	switch {
	case ok && it.last.Equal(last):
		return
	case ok:
		l.unlink(it)
	default:
		if l.index == nil {
			l.index = map[string]*keyItem{}
		}
		it, l.spare = l.spare, nil
		if it == nil {
			it = &keyItem{}
		}
		it.key = key
		l.index[key] = it
	}
	it.last = last
	l.place(it)
}

// place links it after the newest item no newer than it (at the end, for
// a time in order), so that keys of equal times stay in touch order.
func (l *keyList) place(it *keyItem) {
	p := l.tail
	for p != nil && p.last.After(it.last) {
		p = p.prev
	}
	it.prev = p
	if p == nil {
		it.next, l.head = l.head, it
	} else {
		it.next, p.next = p.next, it
	}
	if it.next == nil {
		l.tail = it
	} else {
		it.next.prev = it
	}
}

// unlink takes it out of the list (not the index).
func (l *keyList) unlink(it *keyItem) {
	if it.prev == nil {
		l.head = it.next
	} else {
		it.prev.next = it.next
	}
	if it.next == nil {
		l.tail = it.prev
	} else {
		it.next.prev = it.prev
	}
	it.prev, it.next = nil, nil
}

// remove forgets key, if held.
func (l *keyList) remove(key string) {
	it, ok := l.index[key]
	if !ok {
		return
	}
	l.unlink(it)
	delete(l.index, key)
	*it = keyItem{}
	l.spare = it
}

// oldestExcept returns the key of the oldest time other than keep.
func (l *keyList) oldestExcept(keep string) (string, bool) {
	it := l.head
	if it != nil && it.key == keep {
		it = it.next
	}
	if it == nil {
		return "", false
	}
	return it.key, true
}
