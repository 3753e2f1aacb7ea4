package hetzner

import (
	"fmt"
	"regexp"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// Names and defaults.
const (
	// Name is the provider's name in platform.yaml.
	Name = "hetzner"
	// ResourceType is the resource every server is.
	ResourceType = "hcloud_server"
	// TokenEnv is the plugin's token variable.
	TokenEnv = "HCLOUD_TOKEN"
	// TokenLength is the length the plugin requires of a token.
	TokenLength = 64
	// DefaultImage is used when infrastructure.image is empty.
	DefaultImage = "ubuntu-24.04"
)

// Provider is the Hetzner Cloud provider, of hetznercloud/hcloud ~>
// 1.60. The zero value is ready to use.
type Provider struct{ providers.Plugin[cloud] }

var _ providers.Provider = (*Provider)(nil)

type cloud struct{}

// Cloud: HCLOUD_TOKEN, from the environment or infrastructure.api.token,
// refused ([providers.ErrNoCredentials]) unless 64 characters long (the
// plugin's own check, made here without showing the token).
func (cloud) Cloud() providers.Cloud {
	return providers.Cloud{Name: Name, Requirement: tofu.RequiredProvider{Name: "hcloud", Source: "hetznercloud/hcloud", Version: "~> 1.60"}, EndpointAttr: "endpoint",
		Credentials: func(inf nodes.Infrastructure, _ func(string) string) ([]providers.Credential, error) {
			return []providers.Credential{{Env: TokenEnv, Field: "infrastructure.api.token", Value: inf.API.Token}}, nil
		},
		Check: func(env map[string]string) error {
			if n := len(env[TokenEnv]); n != TokenLength {
				return fmt.Errorf("%s credentials: %w: %s has %d characters: want a Hetzner Cloud API token of %d", Name, providers.ErrNoCredentials, TokenEnv, n, TokenLength)
			}
			return nil
		}}
}

// Configure returns one hcloud_server per slot ([providers.Slots]):
// name = hostname, server_type = the pool's machine, image =
// infrastructure.image (default [DefaultImage]), location =
// infrastructure.zone when set, ssh_keys = [infrastructure.ssh_key_id]
// when set, and labels platform, pool and managed-by. An adopted server
// gets an import block by id and ignore_changes on image, location,
// server_type, ssh_keys and user_data: the API never returns ssh_keys and
// user_data, and image, location, ssh_keys and user_data all force a new
// server, so without it adoption would plan a replacement; server_type is
// ignored so that adopting never resizes (and reboots) a server. Its name
// and labels stay managed: an explicit hostname is written back as the
// server's name. The provider block sets endpoint from
// infrastructure.api.uri when it is set.
//
// Errors: [providers.ErrInvalidInput].
func (p *Provider) Configure(in providers.Input) (*tofu.Config, error) {
	slots, cfg, err := p.Start(in)
	if err != nil {
		return nil, err
	}
	inf := in.Platform.Infrastructure
	image := inf.Image
	if image == "" {
		image = DefaultImage
	}
	for _, s := range slots {
		attrs := map[string]any{
			"name":        s.Hostname,
			"server_type": s.Machine,
			"image":       image,
			"labels": map[string]string{
				"managed-by": "plasma-node",
				"platform":   in.Platform.Name,
				"pool":       s.Pool,
			},
		}
		if inf.Zone != "" {
			attrs["location"] = inf.Zone
		}
		if inf.SSHKeyID != "" {
			attrs["ssh_keys"] = []string{inf.SSHKeyID}
		}
		r := tofu.Resource{Type: ResourceType, Name: s.Resource, Attrs: attrs}
		if s.Adopted() {
			if s.Machine == "" {
				attrs["server_type"] = "adopted" // required; ignored below
			}
			cfg.Imports = append(cfg.Imports, tofu.Import{To: r.Address(), ID: s.ServerID})
			r.Lifecycle = &tofu.Lifecycle{IgnoreChanges: []string{"image", "location", "server_type", "ssh_keys", "user_data"}}
		}
		cfg.Resources = append(cfg.Resources, r)
	}
	cfg.Outputs = []tofu.Output{providers.ServersOutput(slots, func(s providers.Slot) providers.ServerAttrs {
		ref := ResourceType + "." + s.Resource + "."
		return providers.ServerAttrs{
			ServerID:    tofu.Expr(ref + "id"),
			PublicIP:    tofu.Expr(ref + "ipv4_address"),
			Zone:        tofu.Expr(ref + "location"),
			Machine:     tofu.Expr(ref + "server_type"),
			DisplayName: tofu.Expr(ref + "name"),
		}
	})}
	return cfg, nil
}

// Destructive names image, user_data and ssh_keys of hcloud_server. The
// plugin marks all three ForceNew (schema of terraform-provider-hcloud
// v1.60.1, internal/server/resource.go), so tofu plans them as
// replacements, which tofu.Classify already treats as the most
// dangerous class; they are listed so that a plugin that ever applied
// them in place (a rebuild, which wipes the disk) is still caught. A
// server_type change is not destructive: the plugin powers the server off
// and calls change_type, which keeps the disk (downtime, no data loss);
// name and labels are plain updates.
func (*Provider) Destructive() tofu.DestructiveFunc {
	return tofu.DestructiveAttrs(map[string][]string{ResourceType: {"image", "user_data", "ssh_keys"}})
}

var idRE = regexp.MustCompile(`^[1-9][0-9]{0,18}$`)

// ValidateServerID accepts a Hetzner Cloud server id: a positive decimal
// number, like "4711".
//
// Errors: [providers.ErrInvalidServerID].
func (*Provider) ValidateServerID(id string) error {
	if !idRE.MatchString(id) {
		return fmt.Errorf("server id %q: %w: want a Hetzner Cloud server id, a positive number like 4711 (hcloud server list -o columns=id,name)", id, providers.ErrInvalidServerID)
	}
	return nil
}

// Servers decodes the servers output.
//
// Errors: [providers.ErrBadOutput].
func (*Provider) Servers(outputs map[string]tofu.OutputValue) ([]providers.Server, error) {
	return providers.DecodeServers(outputs)
}
