package ipam

import (
	"net/netip"
	"slices"
)

// Used is a set of addresses already taken, typically the private IPs of
// every node file of a platform. It is kept sorted so that allocation skips
// runs of used addresses without walking the pool.
//
// The zero value and a nil *Used are empty sets; Add needs a non-nil *Used.
// A Used is not safe for concurrent Add and reads.
type Used struct {
	addrs []netip.Addr // sorted, unique, unmapped, without zones
}

// NewUsed returns the set of addrs. Invalid (zero) addresses are ignored,
// IPv4-mapped IPv6 addresses count as their IPv4 form and IPv6 zones are
// dropped. Addresses outside a pool are harmless: the pool ignores them.
func NewUsed(addrs ...netip.Addr) *Used {
	u := &Used{}
	u.Add(addrs...)
	return u
}

// Add marks addrs as used, as NewUsed does. Use it to record the result
// of [Pool.Allocate] before allocating again from the same set.
func (u *Used) Add(addrs ...netip.Addr) {
	for _, a := range addrs {
		if a.IsValid() {
			u.addrs = append(u.addrs, canonical(a))
		}
	}
	slices.SortFunc(u.addrs, netip.Addr.Compare)
	u.addrs = slices.Compact(u.addrs)
}

// Has reports whether addr is in the set.
func (u *Used) Has(addr netip.Addr) bool {
	if u == nil || !addr.IsValid() {
		return false
	}
	_, found := slices.BinarySearchFunc(u.addrs, canonical(addr), netip.Addr.Compare)
	return found
}

// sorted returns the set's sorted addresses; nil for a nil set.
func (u *Used) sorted() []netip.Addr {
	if u == nil {
		return nil
	}
	return u.addrs
}

// canonical returns a without an IPv6 zone and with an IPv4-mapped IPv6
// address turned into IPv4.
func canonical(a netip.Addr) netip.Addr {
	return a.WithZone("").Unmap()
}
