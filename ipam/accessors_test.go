package ipam

import "slices"

// Config returns the configuration the pool was built from.
func (p *Pool) Config() Config {
	c := p.cfg
	c.Exclude = slices.Clone(c.Exclude)
	return c
}

// Len returns the number of addresses in the set.
func (u *Used) Len() int {
	if u == nil {
		return 0
	}
	return len(u.addrs)
}
