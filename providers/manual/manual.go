package manual

import (
	"fmt"
	"strings"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// Name is the provider's name in platform.yaml.
const Name = "manual"

// Provider is the manual provider. The zero value is ready to use.
type Provider struct{}

var _ providers.Provider = (*Provider)(nil)

// Name returns "manual".
func (*Provider) Name() string { return Name }

// Requirement returns the zero value: there is no plugin.
func (*Provider) Requirement() tofu.RequiredProvider { return tofu.RequiredProvider{} }

// Credentials returns no environment: nothing is called.
func (*Provider) Credentials(*nodes.Platform, func(string) string) (map[string]string, error) {
	return map[string]string{}, nil
}

// Configure refuses: the manual provider makes no servers.
//
// Errors: always [providers.ErrNoInfrastructure].
func (*Provider) Configure(providers.Input) (*tofu.Config, error) {
	return nil, fmt.Errorf("provider manual has %w: its nodes are registered one by one", providers.ErrNoInfrastructure)
}

// Destructive returns nil: nothing is ever updated.
func (*Provider) Destructive() tofu.DestructiveFunc { return nil }

// ValidateServerID accepts any non-blank id.
//
// Errors: [providers.ErrInvalidServerID] for a blank id.
func (*Provider) ValidateServerID(id string) error {
	if strings.TrimSpace(id) == "" {
		return fmt.Errorf("server id %q: %w: want any non-empty name for a manual server", id, providers.ErrInvalidServerID)
	}
	return nil
}

// Servers decodes the servers output like every provider, though a
// manual platform never has one.
//
// Errors: [providers.ErrBadOutput].
func (*Provider) Servers(outputs map[string]tofu.OutputValue) ([]providers.Server, error) {
	return providers.DecodeServers(outputs)
}
