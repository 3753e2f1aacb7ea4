package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// Name is the provider's name in platform.yaml's
// infrastructure.metal_provider.
const Name = "filecloud"

// fileCloud is a cloud whose servers are JSON files in a folder, the
// platform's infrastructure.api.uri. The zero value is ready to use.
type fileCloud struct{}

var _ providers.Provider = fileCloud{}

// Name returns "filecloud".
func (fileCloud) Name() string { return Name }

// Requirement is the OpenTofu plugin that talks to the cloud.
func (fileCloud) Requirement() tofu.RequiredProvider {
	return tofu.RequiredProvider{Name: "local", Source: "hashicorp/local", Version: "~> 1.4"}
}

// Credentials: a file cloud needs none. A real cloud resolves its token
// here with providers.ResolveCredentials (environment first, then
// infrastructure.api), so it never lands in the configuration.
func (fileCloud) Credentials(*nodes.Platform, func(string) string) (map[string]string, error) {
	return map[string]string{}, nil
}

// Configure makes one local_file per slot: the server's record in the
// cloud folder, holding its hostname, pool and machine type.
func (fileCloud) Configure(in providers.Input) (*tofu.Config, error) {
	slots, err := providers.Slots(in)
	if err != nil {
		return nil, err
	}
	folder := in.Platform.Infrastructure.API.URI
	if !filepath.IsAbs(folder) {
		return nil, fmt.Errorf("%s: %w: infrastructure.api.uri %q: want the cloud's folder, an absolute path", Name, providers.ErrInvalidInput, folder)
	}
	cfg := &tofu.Config{
		RequiredProviders: []tofu.RequiredProvider{fileCloud{}.Requirement()},
		Providers:         []tofu.Provider{{Name: "local"}},
	}
	for _, s := range slots {
		record, err := json.Marshal(map[string]string{"hostname": s.Hostname, "pool": s.Pool, "machine": s.Machine})
		if err != nil {
			return nil, err
		}
		r := tofu.Resource{Type: "local_file", Name: s.Resource, Attrs: map[string]any{
			"filename": filepath.Join(folder, s.Hostname+".json"),
			"content":  string(record),
		}}
		if s.Adopted() {
			cfg.Imports = append(cfg.Imports, tofu.Import{To: r.Address(), ID: s.ServerID})
		}
		cfg.Resources = append(cfg.Resources, r)
	}
	cfg.Outputs = []tofu.Output{providers.ServersOutput(slots, func(s providers.Slot) providers.ServerAttrs {
		return providers.ServerAttrs{
			ServerID: tofu.Expr("local_file." + s.Resource + ".id"),
			Machine:  s.Machine,
			Zone:     "folder",
		}
	})}
	return cfg, nil
}

// Destructive: rewriting a record's content replaces the server.
func (fileCloud) Destructive() tofu.DestructiveFunc {
	return tofu.DestructiveAttrs(map[string][]string{"local_file": {"content"}})
}

var idRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ValidateServerID accepts local_file's id, the SHA-1 of its content.
func (fileCloud) ValidateServerID(id string) error {
	if !idRE.MatchString(id) {
		return fmt.Errorf("server id %q: %w: want 40 hex digits", id, providers.ErrInvalidServerID)
	}
	return nil
}

// Servers decodes the servers output into node metadata.
func (fileCloud) Servers(out map[string]tofu.OutputValue) ([]providers.Server, error) {
	return providers.DecodeServers(out)
}
