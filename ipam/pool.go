package ipam

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// DefaultPrivateNetwork is the CIDR plasmactl-node uses for
// networking.private_network when platform.yaml sets none.
const DefaultPrivateNetwork = "192.168.0.0/16"

// MaxAllocate is the largest number of addresses one Allocate call hands
// out.
const MaxAllocate = 1 << 20

// Config describes an address pool. Only CIDR is required; every other
// field's zero value means "no restriction".
type Config struct {
	// Name names the pool in error messages, e.g. "networking.private_network".
	// Empty is fine.
	Name string
	// CIDR is the pool's network, IPv4 (192.168.0.0/16) or IPv6 (fd00::/64),
	// as [ParseCIDR] reads it: host bits set are an error. Required.
	CIDR string
	// Range, if set, narrows the pool to first-last (inclusive, both inside
	// CIDR, e.g. 10.0.0.10-10.0.0.200); a single address is a range of one.
	// Empty means the whole CIDR.
	Range string
	// Exclude lists addresses (10.0.0.5) or inclusive ranges
	// (10.0.0.50-10.0.0.60), inside CIDR, that are never handed out.
	Exclude []string
	// Gateway, if set, is an address inside CIDR that is never handed out.
	Gateway string
	// SkipEdges skips every IPv4 address whose last octet is 0 or 255, even
	// inside larger subnets, as plasmactl-node does. It has no effect on
	// IPv6 pools.
	SkipEdges bool
}

// Pool is a validated address pool. Its addresses are those in CIDR and
// Range other than the network address, the IPv4 broadcast address, the
// gateway, excluded addresses and, with SkipEdges, IPv4 addresses ending in
// .0 or .255. A Pool is immutable and safe for concurrent use.
type Pool struct {
	cfg         Config
	prefix      netip.Prefix
	first, last netip.Addr  // the span: CIDR narrowed by Range
	network     netip.Addr  // prefix.Addr()
	broadcast   netip.Addr  // IPv4 only; zero for IPv6
	gateway     netip.Addr  // zero if none
	excludes    []exclusion // as given, for Check's messages
	reserved    []span      // sorted, merged: network, broadcast, gateway, excludes
	skipEdges   bool        // SkipEdges on an IPv4 pool
}

// span is an inclusive address interval.
type span struct{ lo, hi netip.Addr }

// exclusion is one Config.Exclude entry and its interval.
type exclusion struct {
	span
	text string
}

// New validates c and returns its pool. Errors wrap [ErrInvalidPool] and
// name the field and the value, e.g.
// pool "x": range "10.0.1.1-10.0.1.9" is outside 10.0.0.0/24.
func New(c Config) (*Pool, error) {
	p := &Pool{cfg: c}
	p.cfg.Exclude = slices.Clone(c.Exclude)

	prefix, err := ParseCIDR(c.CIDR)
	if err != nil {
		return nil, p.invalid(err.Error())
	}
	p.prefix = prefix
	p.network = p.prefix.Addr()
	p.first, p.last = p.network, lastAddr(p.prefix)
	p.skipEdges = c.SkipEdges && p.prefix.Addr().Is4()

	if strings.TrimSpace(c.Range) != "" {
		s, err := p.parseSpan(c.Range)
		if err != nil {
			return nil, p.invalid(fmt.Sprintf("range %q %s", c.Range, err))
		}
		p.first, p.last = s.lo, s.hi
	}
	for _, e := range c.Exclude {
		s, err := p.parseSpan(e)
		if err != nil {
			return nil, p.invalid(fmt.Sprintf("exclude %q %s", e, err))
		}
		p.excludes = append(p.excludes, exclusion{span: s, text: strings.TrimSpace(e)})
	}
	if strings.TrimSpace(c.Gateway) != "" {
		g, err := p.parseAddr(c.Gateway)
		if err != nil && errors.Is(err, ErrInvalidAddress) {
			err = fmt.Errorf("is not an IP address; want one inside %s such as %s", p.prefix, p.prefix.Addr().Next())
		}
		if err != nil {
			return nil, p.invalid(fmt.Sprintf("gateway %q %s", c.Gateway, err))
		}
		p.gateway = g
	}

	reserved := []span{{p.network, p.network}}
	if p.network.Is4() {
		p.broadcast = lastAddr(p.prefix)
		reserved = append(reserved, span{p.broadcast, p.broadcast})
	}
	if p.gateway.IsValid() {
		reserved = append(reserved, span{p.gateway, p.gateway})
	}
	for _, e := range p.excludes {
		reserved = append(reserved, e.span)
	}
	p.reserved = merge(reserved)
	return p, nil
}

// Default returns the pool plasmactl-node allocates private IPs from:
// cidr (empty means [DefaultPrivateNetwork]) without the network and
// broadcast addresses and without any IPv4 address ending in .0 or .255,
// lowest free address first. For 192.168.0.0/16 with nothing used that is
// 192.168.0.1 ... 192.168.0.254, then 192.168.1.1 and so on. Errors are as
// for [New].
func Default(cidr string) (*Pool, error) {
	if strings.TrimSpace(cidr) == "" {
		cidr = DefaultPrivateNetwork
	}
	return New(Config{Name: "networking.private_network", CIDR: cidr, SkipEdges: true})
}

// String describes the pool, e.g.
// pool "x" 10.0.0.0/24 range 10.0.0.10-10.0.0.200 gateway 10.0.0.1 exclude 10.0.0.50 skip-edges.
func (p *Pool) String() string {
	var b strings.Builder
	b.WriteString("pool ")
	if p.cfg.Name != "" {
		fmt.Fprintf(&b, "%q ", p.cfg.Name)
	}
	b.WriteString(p.spanText())
	if p.gateway.IsValid() {
		b.WriteString(" gateway " + p.gateway.String())
	}
	if len(p.excludes) > 0 {
		texts := make([]string, len(p.excludes))
		for i, e := range p.excludes {
			texts[i] = e.text
		}
		b.WriteString(" exclude " + strings.Join(texts, ","))
	}
	if p.skipEdges {
		b.WriteString(" skip-edges")
	}
	return b.String()
}

// Name returns the name the pool was configured with ([Config.Name]);
// empty for an unnamed pool.
func (p *Pool) Name() string { return p.cfg.Name }

// Span returns the addresses the pool hands out from, as people write
// them: its CIDR, followed by " range first-last" when one narrows it.
func (p *Pool) Span() string { return p.spanText() }

// spanText is the CIDR, followed by the range when one narrows it.
func (p *Pool) spanText() string {
	s := p.prefix.String()
	if p.first != p.network || p.last != lastAddr(p.prefix) {
		s += " range " + p.first.String() + "-" + p.last.String()
	}
	return s
}

// Contains reports whether addr lies in the pool's span: inside CIDR and
// Range. It says nothing of reserved or used addresses; see [Pool.Check].
func (p *Pool) Contains(addr netip.Addr) bool {
	if !addr.IsValid() || addr.Zone() != "" {
		return false
	}
	a := addr.Unmap()
	return a.BitLen() == p.first.BitLen() && a.Compare(p.first) >= 0 && a.Compare(p.last) <= 0
}

// Check returns nil if addr, given by hand, may be assigned: it must lie in
// the pool's span, not be reserved and not be in used (nil means nothing
// is used). Errors name the address and wrap [ErrOutOfPool] (outside CIDR
// or Range, or not an address), [ErrReserved] (network or broadcast
// address, gateway, excluded, or an edge address the pool skips) or
// [ErrInUse] ("192.168.0.5 is already used"; the caller adds which node
// uses it).
func (p *Pool) Check(addr netip.Addr, used *Used) error {
	if !p.Contains(addr) {
		if !addr.IsValid() {
			return newError(ErrOutOfPool, fmt.Sprintf("no address given; want one in %s", p.spanText()))
		}
		return newError(ErrOutOfPool, fmt.Sprintf("%s is outside %s", addr, p.spanText()))
	}
	a := addr.Unmap()
	switch {
	case a == p.network:
		return newError(ErrReserved, fmt.Sprintf("%s is the network address of %s", a, p.prefix))
	case a == p.broadcast:
		return newError(ErrReserved, fmt.Sprintf("%s is the broadcast address of %s", a, p.prefix))
	case a == p.gateway:
		return newError(ErrReserved, fmt.Sprintf("%s is the gateway of %s", a, p.prefix))
	}
	for _, e := range p.excludes {
		if a.Compare(e.lo) >= 0 && a.Compare(e.hi) <= 0 {
			return newError(ErrReserved, fmt.Sprintf("%s is excluded from %s by %q", a, p.prefix, e.text))
		}
	}
	if p.skipEdges {
		if b := a.As4()[3]; b == 0 || b == 255 {
			return newError(ErrReserved, fmt.Sprintf("%s ends in .%d, which %s never hands out", a, b, p.prefix))
		}
	}
	if used.Has(a) {
		return newError(ErrInUse, fmt.Sprintf("%s is already used", a))
	}
	return nil
}

// Allocate returns the n lowest free addresses of the pool, ascending:
// addresses of the pool (see [Pool]) not in used (nil means nothing is
// used; used addresses outside the pool are ignored). It is deterministic
// and all-or-nothing: if fewer than n are free it returns no addresses and
// an error wrapping [ErrExhausted] ("no available IPs in pool <cidr>").
//
// Allocate does not mark the addresses in used; call used.Add with them
// (or write the node files and rebuild the set) before allocating again.
// It skips runs of used and reserved addresses instead of walking the pool,
// so its cost grows with the number of used addresses and n, not with the
// pool's size. n must be between 0 and [MaxAllocate].
func (p *Pool) Allocate(used *Used, n int) ([]netip.Addr, error) {
	if n < 0 || n > MaxAllocate {
		return nil, fmt.Errorf("allocate %d addresses from %s: want 0 to %d", n, p.prefix, MaxAllocate)
	}
	if n == 0 {
		return nil, nil
	}
	addrs := used.sorted()
	out := make([]netip.Addr, 0, min(n, 1024))
	a := p.first
	ri, _ := slices.BinarySearchFunc(p.reserved, a, func(s span, t netip.Addr) int { return s.hi.Compare(t) })
	ui, _ := slices.BinarySearchFunc(addrs, a, netip.Addr.Compare)
	for len(out) < n {
		if !a.IsValid() || a.Compare(p.last) > 0 {
			msg := "no available IPs in pool " + p.spanText()
			if len(out) > 0 {
				msg += fmt.Sprintf(": wanted %d, only %d free", n, len(out))
			}
			return nil, newError(ErrExhausted, msg)
		}
		if p.skipEdges {
			if b := a.As4()[3]; b == 0 || b == 255 {
				a = a.Next()
				continue
			}
		}
		for ri < len(p.reserved) && p.reserved[ri].hi.Less(a) {
			ri++
		}
		if ri < len(p.reserved) && p.reserved[ri].lo.Compare(a) <= 0 {
			a = p.reserved[ri].hi.Next() // invalid past the end of the address space
			continue
		}
		for ui < len(addrs) && addrs[ui].Less(a) {
			ui++
		}
		if ui < len(addrs) && addrs[ui] == a {
			a = a.Next()
			ui++
			continue
		}
		out = append(out, a)
		a = a.Next()
	}
	return out, nil
}

// invalid returns an ErrInvalidPool error about the pool's field.
func (p *Pool) invalid(msg string) error {
	if p.cfg.Name != "" {
		return newError(ErrInvalidPool, fmt.Sprintf("pool %q: %s", p.cfg.Name, msg))
	}
	return newError(ErrInvalidPool, "pool: "+msg)
}

// parseSpan parses "first-last" or a single address, both inside the
// pool's CIDR. Its error completes a sentence starting with the value.
func (p *Pool) parseSpan(s string) (span, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	if !isRange {
		a, err := p.parseAddr(s)
		return span{a, a}, err
	}
	first, err := p.parseAddr(lo)
	if err != nil {
		return span{}, err
	}
	last, err := p.parseAddr(hi)
	if err != nil {
		return span{}, err
	}
	if first.Compare(last) > 0 {
		return span{}, fmt.Errorf("has its first address after its last; want first-last, e.g. %s", example(p.prefix))
	}
	return span{first, last}, nil
}

// parseAddr parses one address inside the pool's CIDR. Its error
// completes a sentence starting with the value.
func (p *Pool) parseAddr(s string) (netip.Addr, error) {
	a, err := ParseAddr(s)
	if err != nil {
		return netip.Addr{}, newError(ErrInvalidAddress, fmt.Sprintf("is not an address or first-last range; want one such as %s", example(p.prefix)))
	}
	if !p.prefix.Contains(a) {
		return netip.Addr{}, fmt.Errorf("is outside %s", p.prefix)
	}
	return a, nil
}

// example returns an example range inside prefix for error messages.
func example(prefix netip.Prefix) string {
	lo := prefix.Addr().Next()
	hi := lo
	for i := 0; i < 9 && hi.Next().IsValid() && prefix.Contains(hi.Next()); i++ {
		hi = hi.Next()
	}
	if !lo.IsValid() || !prefix.Contains(lo) {
		return prefix.Addr().String()
	}
	return lo.String() + "-" + hi.String()
}

// lastAddr returns the highest address in prefix (the IPv4 broadcast
// address).
func lastAddr(prefix netip.Prefix) netip.Addr {
	a := prefix.Masked().Addr()
	bits := prefix.Bits()
	if a.Is4() {
		b := a.As4()
		setHostBits(b[:], bits)
		return netip.AddrFrom4(b)
	}
	b := a.As16()
	setHostBits(b[:], bits)
	return netip.AddrFrom16(b)
}

// setHostBits sets every bit of b after the first bits.
func setHostBits(b []byte, bits int) {
	for i := range b {
		switch {
		case bits >= 8*(i+1):
		case bits <= 8*i:
			b[i] = 0xff
		default:
			b[i] |= 0xff >> (bits - 8*i)
		}
	}
}

// merge sorts spans and joins overlapping or adjacent ones.
func merge(spans []span) []span {
	slices.SortFunc(spans, func(x, y span) int { return x.lo.Compare(y.lo) })
	out := spans[:0:0]
	for _, s := range spans {
		if n := len(out); n > 0 {
			last := &out[n-1]
			next := last.hi.Next()
			if s.lo.Compare(last.hi) <= 0 || (next.IsValid() && s.lo == next) {
				if s.hi.Compare(last.hi) > 0 {
					last.hi = s.hi
				}
				continue
			}
		}
		out = append(out, s)
	}
	return out
}
