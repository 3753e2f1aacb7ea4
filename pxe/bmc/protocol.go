package bmc

import (
	"fmt"
	"strings"

	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

// The BMC protocols, as endpoint schemes and [Controller.Protocol] names.
const (
	IPMI    = "ipmi"
	Redfish = "redfish"
)

// Drivers open the controllers whose drivers live apart from this
// package: the IPMI one (package pxe/bmc/ipmi, which links go-ipmi), so
// that a program that only stores BMC endpoints links no IPMI stack.
type Drivers struct {
	// IPMI opens an IPMI controller; nil refuses IPMI endpoints.
	IPMI func(e Endpoint, c Credentials, o Options) (Controller, error)
}

// protocol is what one BMC protocol's endpoint and settings take, and
// how its controller opens.
type protocol struct {
	// systemID checks the URL's path and returns the endpoint's SystemID.
	systemID func(path string) (string, error)
	// settings checks the options that apply to the protocol, and
	// refuses those of the others.
	settings func(o Options) error
	// open opens the controller.
	open func(d Drivers, e Endpoint, c Credentials, o Options) (Controller, error)
	// media says its controllers can mount virtual media
	// ([VirtualMedia]).
	media bool
}

// protocolOf is the one place a BMC protocol is chosen: by name, what
// its endpoint takes ([Parse]), what settings apply ([CheckSettings])
// and its driver ([Open]).
func protocolOf(name string) (protocol, bool) {
	switch name {
	case IPMI:
		return protocol{
			systemID: func(path string) (string, error) {
				if path != "" {
					return "", fmt.Errorf("an IPMI endpoint has no path")
				}
				return "", nil
			},
			settings: func(o Options) error {
				if o.CipherSuite != 0 {
					if _, err := ParseCipherSuite(fmt.Sprint(o.CipherSuite)); err != nil {
						return err
					}
				}
				if err := ValidateIPMI(o.CipherSuite, o.Privilege); err != nil {
					return err
				}
				if o.Fingerprint != "" || o.Session {
					return fmt.Errorf("%w: a certificate fingerprint and a session are Redfish settings", ErrInvalidEndpoint)
				}
				return nil
			},
			open: func(d Drivers, e Endpoint, c Credentials, o Options) (Controller, error) {
				if d.IPMI == nil {
					return nil, fmt.Errorf("%w: this program links no IPMI driver", ErrInvalidEndpoint)
				}
				return d.IPMI(e, c, o)
			},
		}, true
	case Redfish:
		return protocol{
			systemID: func(path string) (string, error) {
				if strings.ContainsAny(path, "/?#%") || path == "." || path == ".." {
					return "", fmt.Errorf("the system id is one path element")
				}
				return path, nil
			},
			settings: func(o Options) error {
				if o.CipherSuite != 0 || o.Privilege != "" {
					return fmt.Errorf("%w: a cipher suite and a privilege are IPMI settings", ErrInvalidEndpoint)
				}
				if o.Fingerprint != "" {
					if _, err := tlscert.ParseFingerprint(o.Fingerprint); err != nil {
						return fmt.Errorf("%w: %w", ErrInvalidEndpoint, err)
					}
				}
				return nil
			},
			open: func(_ Drivers, e Endpoint, c Credentials, o Options) (Controller, error) {
				return NewRedfish(e, c, o)
			},
			media: true,
		}, true
	}
	return protocol{}, false
}

// HasVirtualMedia reports whether the controllers of e's protocol can
// mount virtual media ([VirtualMedia]): Redfish can, IPMI has none.
func HasVirtualMedia(e Endpoint) bool {
	p, ok := protocolOf(e.Protocol)
	return ok && p.media
}

// CheckSettings checks the options that apply to e's protocol (an IPMI
// cipher suite and privilege; a Redfish certificate fingerprint and
// session) and refuses another protocol's. Errors wrap
// [ErrInvalidEndpoint].
func CheckSettings(e Endpoint, o Options) error {
	p, ok := protocolOf(e.Protocol)
	if !ok {
		return fmt.Errorf("%w: protocol %q (want ipmi or redfish)", ErrInvalidEndpoint, e.Protocol)
	}
	return p.settings(o)
}

// Open opens the controller of e with its protocol's driver, d's for
// those that live apart (IPMI).
func Open(e Endpoint, c Credentials, o Options, d Drivers) (Controller, error) {
	p, ok := protocolOf(e.Protocol)
	if !ok {
		return nil, fmt.Errorf("%w: protocol %q (want ipmi or redfish)", ErrInvalidEndpoint, e.Protocol)
	}
	return p.open(d, e, c, o)
}
