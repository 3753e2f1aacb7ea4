// Package ipam hands out private addresses from a pool (a CIDR, optionally
// narrowed to a range, minus excluded addresses and a gateway; IPv4 or
// IPv6) deterministically, lowest free address first, against a set of
// addresses already used.
//
// It does no I/O and keeps no state between calls: the used set is built by
// the caller from the node files, which stay the only source of truth, and
// recording an allocation is the caller's job (write the node file, or
// [Used.Add] for the next call).
package ipam
