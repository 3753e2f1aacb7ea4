package scaleway

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// Names.
const (
	// Name is the provider's name in platform.yaml.
	Name = "scaleway"
	// ResourceType is the resource every server is.
	ResourceType = "scaleway_baremetal_server"
)

// Provider is the Scaleway Elastic Metal provider, of scaleway/scaleway
// ~> 2.0. The zero value is ready to use.
type Provider struct{ providers.Plugin[cloud] }

var _ providers.Provider = (*Provider)(nil)

type cloud struct{}

// Cloud: SCW_ACCESS_KEY and SCW_SECRET_KEY (or
// infrastructure.api.access_key and secret_key) and, when set,
// SCW_DEFAULT_PROJECT_ID (or infrastructure.project_id).
func (cloud) Cloud() providers.Cloud {
	return providers.Cloud{Name: Name, Requirement: tofu.RequiredProvider{Name: "scaleway", Source: "scaleway/scaleway", Version: "~> 2.0"}, EndpointAttr: "api_url",
		Credentials: func(inf nodes.Infrastructure, _ func(string) string) ([]providers.Credential, error) {
			return []providers.Credential{
				{Env: "SCW_ACCESS_KEY", Field: "infrastructure.api.access_key", Value: inf.API.AccessKey},
				{Env: "SCW_SECRET_KEY", Field: "infrastructure.api.secret_key", Value: inf.API.SecretKey},
				{Env: "SCW_DEFAULT_PROJECT_ID", Field: "infrastructure.project_id", Value: inf.ProjectID, Optional: true},
			}, nil
		}}
}

// Configure returns one scaleway_baremetal_server per slot: name and
// hostname = hostname, offer = the pool's machine, zone =
// infrastructure.zone, os = infrastructure.image (an OS id), ssh_key_ids
// = [infrastructure.ssh_key_id], tags platform:, pool:, managed-by:. An
// adopted server is imported by <zone>/<uuid>, in the zone of its id, and
// ignores os, offer, hostname, ssh_key_ids and install_config_afterward,
// so adopting never reinstalls. The provider block sets api_url from
// infrastructure.api.uri when set.
//
// Errors: [providers.ErrInvalidInput], also for a dedibox (sd-<N>) server
// id.
func (p *Provider) Configure(in providers.Input) (*tofu.Config, error) {
	slots, cfg, err := p.Start(in)
	if err != nil {
		return nil, err
	}
	inf := in.Platform.Infrastructure
	for _, s := range slots {
		attrs := map[string]any{
			"name":     s.Hostname,
			"hostname": s.Hostname,
			"offer":    s.Machine,
			"tags":     []string{"platform:" + in.Platform.Name, "pool:" + s.Pool, "managed-by:plasma-node"},
		}
		zone := inf.Zone
		if inf.Image != "" {
			attrs["os"] = inf.Image
		} else {
			attrs["install_config_afterward"] = true
		}
		if inf.SSHKeyID != "" {
			attrs["ssh_key_ids"] = []string{inf.SSHKeyID}
		}
		r := tofu.Resource{Type: ResourceType, Name: s.Resource, Attrs: attrs}
		if s.Adopted() {
			z, _, ok := strings.Cut(s.ServerID, "/")
			if !ok {
				return nil, fmt.Errorf("configure: server %q: %w: a dedibox server cannot be adopted as %s: want a <zone>/<uuid> Elastic Metal id", s.ServerID, providers.ErrInvalidInput, ResourceType)
			}
			zone = z
			cfg.Imports = append(cfg.Imports, tofu.Import{To: r.Address(), ID: s.ServerID})
			r.Lifecycle = &tofu.Lifecycle{IgnoreChanges: []string{"hostname", "install_config_afterward", "offer", "os", "ssh_key_ids"}}
		}
		if zone != "" {
			attrs["zone"] = zone
		}
		cfg.Resources = append(cfg.Resources, r)
	}
	cfg.Outputs = []tofu.Output{providers.ServersOutput(slots, func(s providers.Slot) providers.ServerAttrs {
		ref := ResourceType + "." + s.Resource + "."
		return providers.ServerAttrs{
			ServerID:    tofu.Expr(ref + "id"),
			PublicIP:    tofu.Expr("try(" + ref + "ipv4[0].address, null)"),
			Zone:        tofu.Expr(ref + "zone"),
			Machine:     s.Machine,
			DisplayName: tofu.Expr(ref + "name"),
		}
	})}
	return cfg, nil
}

// Destructive names what the plugin (terraform-provider-scaleway 2.81,
// scaleway_baremetal_server's update) applies by reinstalling the server
// (POST .../servers/{id}/install, which wipes it): a change of os,
// always; a change of ssh_key_ids, user, password, password_wo_version,
// service_password, service_password_wo_version or
// reinstall_on_config_changes only when reinstall_on_config_changes is
// true after the change (else the plugin warns and changes nothing).
// hostname, name, tags, offer (a move to the monthly offer),
// partitioning (the plugin watches a "partition" key the schema lacks)
// and install_config_afterward reinstall nothing. zone and project_id
// force a new server, which tofu plans as a replacement; they are listed
// too, so that a plugin that ever applied them in place would still be
// caught.
func (*Provider) Destructive() tofu.DestructiveFunc {
	return tofu.DestructiveRules(map[string][]tofu.DestructiveRule{ResourceType: {
		{Attrs: []string{"os", "zone", "project_id"}},
		{Attrs: []string{"ssh_key_ids", "user", "password", "password_wo_version", "service_password",
			"service_password_wo_version", "reinstall_on_config_changes"}, When: tofu.AfterTrue(reinstallOnConfig)},
	}})
}

// reinstallOnConfig is the attribute that lets the plugin reinstall a
// server for a changed SSH key, user or password.
const reinstallOnConfig = "reinstall_on_config_changes"

var _ providers.PlatformValidator = (*Provider)(nil)

// uuidRE is a canonical UUID, as the plugin's verify.IsUUID accepts it
// (hashicorp/go-uuid: hexadecimal of either case).
var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ValidatePlatform checks what the plugin validates before any API call
// (terraform-provider-scaleway 2.81, scaleway_baremetal_server's schema):
// infrastructure.image, the os, must be a UUID or a zoned <zone>/<UUID>
// (verify.IsUUIDorUUIDWithLocality); infrastructure.ssh_key_id, an entry
// of ssh_key_ids, a plain UUID (verify.IsUUID: no zone).
//
// Errors: [*providers.SettingError].
func (*Provider) ValidatePlatform(p *nodes.Platform) error {
	if p == nil {
		return nil
	}
	inf := p.Infrastructure
	if img := inf.Image; img != "" {
		id := img
		if _, after, ok := strings.Cut(img, "/"); ok {
			id = after
		}
		if !uuidRE.MatchString(id) {
			return providers.NewSettingError(p, "infrastructure.image", img,
				"a Scaleway OS id, a UUID or <zone>/<UUID> (scw baremetal os list)")
		}
	}
	if k := inf.SSHKeyID; k != "" && !uuidRE.MatchString(k) {
		return providers.NewSettingError(p, "infrastructure.ssh_key_id", k,
			"a Scaleway SSH key id, a UUID like 11111111-2222-3333-4444-555555555555 (scw iam ssh-key list)")
	}
	return nil
}

var (
	dediboxRE = regexp.MustCompile(`^sd-[1-9][0-9]*$`)
	zonedRE   = regexp.MustCompile(`^[a-z]{2}-[a-z]{3}-[1-9]/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

var _ providers.HostnameDeriver = (*Provider)(nil)

// DeriveHostname returns a dedibox id as it is (sd-12345), and for an
// Elastic Metal id its zone and the first group of its UUID,
// fr-par-2-11111111 for fr-par-2/11111111-2222-3333-4444-555555555555;
// "" for an id that is neither.
func (*Provider) DeriveHostname(id string) string {
	switch {
	case dediboxRE.MatchString(id):
		return id
	case zonedRE.MatchString(id):
		zone, uuid, _ := strings.Cut(id, "/")
		return zone + "-" + uuid[:8]
	}
	return ""
}

// ValidateServerID accepts a dedibox id sd-<N> or an Elastic Metal id
// <zone>/<uuid>, like fr-par-2/11111111-2222-3333-4444-555555555555.
//
// Errors: [providers.ErrInvalidServerID].
func (*Provider) ValidateServerID(id string) error {
	if !dediboxRE.MatchString(id) && !zonedRE.MatchString(id) {
		return fmt.Errorf("server id %q: %w: want a Scaleway dedibox id like sd-12345 or a zoned Elastic Metal id like fr-par-2/11111111-2222-3333-4444-555555555555", id, providers.ErrInvalidServerID)
	}
	return nil
}

// Servers decodes the servers output.
//
// Errors: [providers.ErrBadOutput].
func (*Provider) Servers(outputs map[string]tofu.OutputValue) ([]providers.Server, error) {
	return providers.DecodeServers(outputs)
}
