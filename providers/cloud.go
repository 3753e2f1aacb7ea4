package providers

import (
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/tofu"
)

// Cloud is what tells one cloud provider (aws, hetzner, ovh, scaleway)
// from another in the part they share, which [Plugin] gives them.
type Cloud struct {
	// Name is the provider's name in platform.yaml.
	Name string
	// Requirement is the OpenTofu plugin; its Name names the provider block.
	Requirement tofu.RequiredProvider
	// EndpointAttr, when set, is the provider block's infrastructure.api.uri.
	EndpointAttr string
	// Credentials lists the credentials to resolve (getenv is never nil).
	Credentials func(inf nodes.Infrastructure, getenv func(string) string) ([]Credential, error)
	// Check, when set, checks the resolved variables.
	Check func(env map[string]string) error
}

// Plugin gives the cloud provider embedding it the Name, Requirement and
// Credentials of [Provider] from the [Cloud] of D, a zero-size type whose
// Cloud method returns constants. Its zero value is ready to use.
type Plugin[D interface{ Cloud() Cloud }] struct{}

// Name returns the Cloud's Name.
func (Plugin[D]) Name() string { return (*new(D)).Cloud().Name }

// Requirement returns the Cloud's Requirement.
func (Plugin[D]) Requirement() tofu.RequiredProvider { return (*new(D)).Cloud().Requirement }

// Credentials resolves the Cloud's Credentials, then runs its Check.
// Errors: [ErrNoCredentials]; [ErrKeyringRef].
func (Plugin[D]) Credentials(pl *nodes.Platform, getenv func(string) string) (map[string]string, error) {
	c, inf := (*new(D)).Cloud(), nodes.Infrastructure{}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if pl != nil {
		inf = pl.Infrastructure
	}
	creds, err := c.Credentials(inf, getenv)
	var env map[string]string
	if err == nil {
		env, err = resolveCredentials(c.Name, getenv, creds)
	}
	if err == nil && c.Check != nil {
		err = c.Check(env)
	}
	if err != nil {
		return nil, err
	}
	return env, nil
}

// Start begins a Configure: the [Slots] of in and a configuration with
// the Cloud's required provider and provider block, whose EndpointAttr
// is infrastructure.api.uri when that is set.
//
// Errors: [ErrInvalidInput].
func (Plugin[D]) Start(in Input) ([]Slot, *tofu.Config, error) {
	slots, err := Slots(in)
	if err != nil {
		return nil, nil, err
	}
	c := (*new(D)).Cloud()
	prov := tofu.Provider{Name: c.Requirement.Name, Attrs: map[string]any{}}
	if uri := in.Platform.Infrastructure.API.URI; uri != "" && c.EndpointAttr != "" {
		prov.Attrs[c.EndpointAttr] = uri
	}
	return slots, &tofu.Config{RequiredProviders: []tofu.RequiredProvider{c.Requirement}, Providers: []tofu.Provider{prov}}, nil
}
