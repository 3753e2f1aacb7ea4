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

// Level is one place a two-level bound counts an address at: Key, its
// address or its /64, and Bound, what Key may hold.
type Level struct {
	Key   netip.Prefix
	Bound int
}

// Levels returns the levels a two-level bound of bound counts the
// address a at, n of them: its address ([AddrOf]) at bound and, for an
// IPv6 address, its /64 ([Of]) at bound×[PrefixShare]. An IPv4 address
// (also IPv4-mapped) is one level; an invalid a (a peer that is no IP
// address) is one level of the zero Prefix, so all such peers count as
// one client. It does not allocate. Every two-level bound of the
// window (TFTP transfers, HTTP connections, answer refusals, failed API
// logins) counts by it.
func Levels(a netip.Addr, bound int) (ls [2]Level, n int) {
	addr, src := AddrOf(a), Of(a)
	ls[0] = Level{addr, bound}
	if src == addr {
		return ls, 1
	}
	ls[1] = Level{src, bound * PrefixShare}
	return ls, 2
}

// FullPrefix returns what is full of a's client under bound: its address
// ([AddrOf]), else its /64 ([Of]); the zero Prefix when neither is. A
// bound that makes room by dropping one of the client's holdings drops
// one inside it.
func (c *Counts) FullPrefix(a netip.Addr, bound int) netip.Prefix {
	ls, n := Levels(a, bound)
	for _, l := range ls[:n] {
		if c.by[l.Key] >= l.Bound {
			return l.Key
		}
	}
	return netip.Prefix{}
}

// Add adds n (negative: takes back) to what the client at a holds, under
// its address and its /64; a count that reaches zero is forgotten.
func (c *Counts) Add(a netip.Addr, n int) {
	if c.by == nil {
		c.by = map[netip.Prefix]int{}
	}
	ls, k := Levels(a, 0)
	for _, l := range ls[:k] {
		c.add(l.Key, n)
	}
}

func (c *Counts) add(k netip.Prefix, n int) {
	if c.by[k] += n; c.by[k] <= 0 {
		delete(c.by, k)
	}
}

// Prune makes room in a two-level bound's table m of counts, keyed by
// [Levels]' keys, that may hold limit: it forgets the counts expired
// reports, then, while m still holds limit or more, IPv6 addresses' own
// counts first (their /64's count keeps them, so a flood of one /64's
// addresses cannot push the /64's count out), then any.
func Prune[V any](m map[netip.Prefix]V, limit int, expired func(V) bool) {
	for k, v := range m {
		if expired(v) {
			delete(m, k)
		}
	}
	for _, anyKey := range []bool{false, true} {
		for k := range m {
			if len(m) < limit {
				return
			}
			if anyKey || (k.Addr().Is6() && k.Bits() == 128) {
				delete(m, k)
			}
		}
	}
}

// Len returns how many addresses and prefixes hold anything.
func (c *Counts) Len() int { return len(c.by) }
