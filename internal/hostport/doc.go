// Package hostport holds the one rule for a network address an operator
// gives: a listen address (HOST:PORT) and the host and port of a server's
// URL. It checks their form only, so a literal that is not an address
// (999.0.0.1) is refused as bad input rather than looked up in DNS.
//
// It neither resolves names nor listens.
package hostport
