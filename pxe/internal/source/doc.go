// Package source says which client an address counts as for the
// window's per-source bounds (connections, TFTP transfers, refused
// answers, failed API logins): an IPv4 address is itself, an IPv6 address
// is its /64.
//
// It keeps no counts and knows no bound; each bound keys its own counts
// by [Of].
package source
