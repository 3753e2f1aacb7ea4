// Package hostname holds the one rule for node and platform names, which
// become host names: both binaries and their libraries check and state
// it from here, in the same words. It does not know FQDNs or domains.
package hostname
