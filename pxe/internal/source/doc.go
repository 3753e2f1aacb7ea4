// Package source says which client an address counts as for the
// window's per-source bounds (connections, TFTP transfers, refused
// answers, failed API logins): an IPv4 address is itself, an IPv6 address
// is its /64.
//
// A bound either keys its counts by [Of] (a source: an IPv6 /64), or,
// two-level, counts each address inside its /64 with [Counts] (a
// segment's machines each get a client's budget, the /64 together
// [PrefixShare] of them). It knows no bound's size.
package source
