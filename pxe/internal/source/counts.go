package source

import "net/netip"

// PrefixShare is how many clients' bounds the addresses of one IPv6 /64
// hold together. Each address of a /64 is a client with its own bound (a
// segment's machines share one /64 and must not share one budget), and
// the whole /64 is bounded at PrefixShare times that, so that rotating
// addresses within it gains at most PrefixShare clients' worth.
const PrefixShare = 8

// AddrOf returns the client the address a is: an IPv4 address (also
// IPv4-mapped) as a /32, an IPv6 address as a /128, without its zone.
// An invalid a gives the zero Prefix.
func AddrOf(a netip.Addr) netip.Prefix {
	if !a.IsValid() {
		return netip.Prefix{}
	}
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen())
}

// Counts counts what clients hold, by address and by source ([Of]), for
// a two-level bound: an address is full at the bound, an IPv6 /64 at
// [PrefixShare] times it; an IPv4 address is its own source and is
// counted once. The zero value is empty and ready. It is not safe for
// concurrent use: the bound's lock guards it.
type Counts struct {
	by map[netip.Prefix]int
}

// Full reports whether a client at a may take no more under bound: its
// address holds bound, or its /64 holds bound×[PrefixShare].
func (c *Counts) Full(a netip.Addr, bound int) bool {
	return c.FullPrefix(a, bound).IsValid()
}

// FullPrefix returns what is full of a's client under bound: its address
// ([AddrOf]), else its /64 ([Of]); the zero Prefix when neither is. A
// bound that makes room by dropping one of the client's holdings drops
// one inside it.
func (c *Counts) FullPrefix(a netip.Addr, bound int) netip.Prefix {
	addr, src := AddrOf(a), Of(a)
	if c.by[addr] >= bound {
		return addr
	}
	if src != addr && c.by[src] >= bound*PrefixShare {
		return src
	}
	return netip.Prefix{}
}

// Add adds n (negative: takes back) to what the client at a holds, under
// its address and its /64; a count that reaches zero is forgotten.
func (c *Counts) Add(a netip.Addr, n int) {
	if c.by == nil {
		c.by = map[netip.Prefix]int{}
	}
	addr, src := AddrOf(a), Of(a)
	c.add(addr, n)
	if src != addr {
		c.add(src, n)
	}
}

func (c *Counts) add(k netip.Prefix, n int) {
	if c.by[k] += n; c.by[k] <= 0 {
		delete(c.by, k)
	}
}

// Len returns how many addresses and prefixes hold anything.
func (c *Counts) Len() int { return len(c.by) }
