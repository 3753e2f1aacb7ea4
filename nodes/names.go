package nodes

import (
	"fmt"

	"github.com/plasmactl/plasma-node/internal/hostname"
	"github.com/plasmactl/plasma-node/internal/usage"
)

// ErrInvalidDomain: a platform's domain (dns.domain) is not a DNS name.
var ErrInvalidDomain = usage.New("invalid domain")

// ValidateHostname reports whether h is an RFC 1123 label: lower-case
// letters, digits and '-', 1 to 63 characters, not starting or ending
// with '-', and not digits only: such a name reads as an IPv4 address to
// the resolver's inet_aton ("1234" is 0.0.4.210), and the Proxmox VE
// installer refuses it as a host name. (plasmactl-node's label check lets
// digits only through; plasma-node refuses them when a node is made, and
// validate reports an existing one.) The error wraps [ErrInvalidName].
func ValidateHostname(h string) error {
	if !hostname.Valid(h) {
		return fmt.Errorf("hostname %q: %w: want %s", h, ErrInvalidName, hostname.Rule)
	}
	return nil
}

// ValidatePlatformName reports whether name can name a platform: the
// rules of [ValidateHostname], since it starts generated hostnames.
func ValidatePlatformName(name string) error {
	if !hostname.Valid(name) {
		return fmt.Errorf("platform %q: %w: want %s", name, ErrInvalidName, hostname.Rule)
	}
	return nil
}

// ValidateDomain reports whether d can be a platform's domain
// (dns.domain), which node host names join into FQDNs: RFC 1123 labels
// of lower-case ASCII letters, digits and '-', each 1 to 63 characters,
// 253 characters in all. The error wraps [ErrInvalidDomain], names the
// label at fault and says what would be valid. An empty domain is valid:
// the platform has none.
func ValidateDomain(d string) error {
	if d == "" {
		return nil
	}
	if err := hostname.CheckDomain(d); err != nil {
		return fmt.Errorf("domain %q: %w: %w; want %s", d, ErrInvalidDomain, err, hostname.DomainRule)
	}
	return nil
}
