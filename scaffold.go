package plasmanode

import (
	"context"
	"errors"
	"fmt"

	"github.com/plasmactl/plasma-node/ipam"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

// ScaffoldOptions describe a platform to create.
type ScaffoldOptions struct {
	// Platform names the platform (an RFC 1123 label). Required.
	Platform string
	// Provider is infrastructure.metal_provider. Default: manual.
	Provider string
	// Domain is dns.domain. Default: none.
	Domain string
	// PrivateNetwork is networking.private_network. Default: 192.168.0.0/16.
	PrivateNetwork string
}

// ScaffoldResult tells what Scaffold did.
type ScaffoldResult struct {
	// Platform is the platform as it is on disk.
	Platform *nodes.Platform
	// Created is false when the platform already existed with the same
	// settings.
	Created bool
	// Missing are the settings of platform.yaml the provider needs to
	// create servers that the platform lacks (aws: infrastructure.image).
	Missing []providers.Required
}

// Scaffold creates platforms/<Platform>/platform.yaml and nodes/. A
// platform that exists is left alone when the options agree with it (only
// the options given are compared); otherwise the error wraps
// [ErrConflict] and names the setting.
func (p *Project) Scaffold(ctx context.Context, o ScaffoldOptions) (ScaffoldResult, error) {
	if err := nodes.ValidatePlatformName(o.Platform); err != nil {
		return ScaffoldResult{}, err
	}
	provider := o.Provider
	if provider == "" {
		provider = "manual"
	}
	prov, err := p.providers.Get(provider)
	if err != nil {
		return ScaffoldResult{}, err
	}
	if err := nodes.ValidateDomain(o.Domain); err != nil {
		return ScaffoldResult{}, &OptionError{Field: "Domain", Err: err}
	}
	network := o.PrivateNetwork
	if network == "" {
		network = ipam.DefaultPrivateNetwork
	}
	if _, err := ipam.Default(network); err != nil {
		return ScaffoldResult{}, &OptionError{Field: "PrivateNetwork", Err: err}
	}
	existing, err := p.Store.Platform(ctx, o.Platform)
	switch {
	case err == nil:
		return ScaffoldResult{Platform: existing}, agree(existing, o)
	case !errors.Is(err, nodes.ErrPlatformNotFound):
		return ScaffoldResult{}, err
	}
	plat := &nodes.Platform{
		Name:           o.Platform,
		Infrastructure: nodes.Infrastructure{MetalProvider: provider},
		DNS:            nodes.DNS{Domain: o.Domain},
		Networking:     nodes.Networking{PrivateNetwork: network},
	}
	if err := p.Store.CreatePlatform(ctx, plat); err != nil {
		if errors.Is(err, nodes.ErrExists) {
			// Created by a concurrent run between the check and the write.
			existing, lerr := p.Store.Platform(ctx, o.Platform)
			if lerr != nil {
				return ScaffoldResult{}, lerr
			}
			return ScaffoldResult{Platform: existing}, agree(existing, o)
		}
		return ScaffoldResult{}, err
	}
	p.log.Info("platform created", "platform", o.Platform, "provider", provider)
	return ScaffoldResult{Platform: plat, Created: true, Missing: providers.MissingSettings(prov, plat)}, nil
}

// agree refuses each setting of o that differs from the existing
// platform's, as an [OptionError] wrapping [ErrConflict].
func agree(existing *nodes.Platform, o ScaffoldOptions) error {
	check := func(field, want, have string) error {
		if want != "" && want != have {
			return &OptionError{Field: field, Value: want, Err: fmt.Errorf("platform %s exists with %s %q: %w (edit %s to change it)",
				existing.Name, fieldWords(field), have, ErrConflict, existing.File())}
		}
		return nil
	}
	have := existing.Networking.PrivateNetwork
	if have == "" {
		have = ipam.DefaultPrivateNetwork
	}
	return errors.Join(
		check("Provider", o.Provider, existing.Infrastructure.MetalProvider),
		check("Domain", o.Domain, existing.DNS.Domain),
		check("PrivateNetwork", o.PrivateNetwork, have),
	)
}
