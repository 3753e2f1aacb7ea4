package aws

import (
	"fmt"
	"regexp"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// Names.
const (
	// Name is the provider's name in platform.yaml.
	Name = "aws"
	// ResourceType is the resource every server is.
	ResourceType = "aws_instance"
)

// Provider is the Amazon EC2 provider, of hashicorp/aws ~> 5.0. The
// zero value is ready to use.
type Provider struct{ providers.Plugin[cloud] }

var _ providers.Provider = (*Provider)(nil)

type cloud struct{}

// Cloud: AWS_REGION (or infrastructure.region) and either AWS_PROFILE
// (environment only) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or
// infrastructure.api.access_key and secret_key), with AWS_SESSION_TOKEN
// when set.
func (cloud) Cloud() providers.Cloud {
	return providers.Cloud{Name: Name, Requirement: tofu.RequiredProvider{Name: "aws", Source: "hashicorp/aws", Version: "~> 5.0"},
		Credentials: func(inf nodes.Infrastructure, getenv func(string) string) ([]providers.Credential, error) {
			profile := getenv("AWS_PROFILE") != ""
			return []providers.Credential{
				{Env: "AWS_REGION", Field: "infrastructure.region", Value: inf.Region},
				{Env: "AWS_PROFILE", Optional: true},
				{Env: "AWS_ACCESS_KEY_ID", Field: "infrastructure.api.access_key", Value: inf.API.AccessKey, Optional: profile},
				{Env: "AWS_SECRET_ACCESS_KEY", Field: "infrastructure.api.secret_key", Value: inf.API.SecretKey, Optional: profile},
				{Env: "AWS_SESSION_TOKEN", Optional: true},
			}, nil
		}}
}

// Configure returns one aws_instance per slot: ami = infrastructure.image,
// instance_type = the pool's machine, availability_zone =
// infrastructure.zone, key_name = infrastructure.ssh_key_id, tags Name =
// hostname, platform, pool, managed-by. An adopted instance is imported
// by id and ignores ami, availability_zone, instance_type, key_name,
// user_data and user_data_base64, so adopting never replaces nor resizes
// it; its Name tag stays managed. The provider block sets region and,
// from infrastructure.api.uri, endpoints { ec2 }.
//
// Errors: [providers.ErrInvalidInput]; a [*providers.SettingError] when
// a server is to be created without infrastructure.image (an AMI id).
func (p *Provider) Configure(in providers.Input) (*tofu.Config, error) {
	slots, cfg, err := p.Start(in)
	if err != nil {
		return nil, err
	}
	inf, prov := in.Platform.Infrastructure, &cfg.Providers[0]
	if inf.Region != "" {
		prov.Attrs["region"] = inf.Region
	}
	if inf.API.URI != "" {
		prov.Blocks = []tofu.Block{{Type: "endpoints", Attrs: map[string]any{"ec2": inf.API.URI}}}
	}
	for _, s := range slots {
		if !s.Adopted() && inf.Image == "" {
			return nil, fmt.Errorf("pool %q: %w", s.Pool, providers.NewSettingError(in.Platform, imageField, "", imageWant))
		}
		attrs := map[string]any{
			"instance_type": s.Machine,
			"tags": map[string]string{
				"Name": s.Hostname, "platform": in.Platform.Name, "pool": s.Pool, "managed-by": "plasma-node",
			},
		}
		if inf.Image != "" {
			attrs["ami"] = inf.Image
		}
		if inf.Zone != "" {
			attrs["availability_zone"] = inf.Zone
		}
		if inf.SSHKeyID != "" {
			attrs["key_name"] = inf.SSHKeyID
		}
		r := tofu.Resource{Type: ResourceType, Name: s.Resource, Attrs: attrs}
		if s.Adopted() {
			cfg.Imports = append(cfg.Imports, tofu.Import{To: r.Address(), ID: s.ServerID})
			r.Lifecycle = &tofu.Lifecycle{IgnoreChanges: []string{"ami", "availability_zone", "instance_type", "key_name", "user_data", "user_data_base64"}}
		}
		cfg.Resources = append(cfg.Resources, r)
	}
	cfg.Outputs = []tofu.Output{providers.ServersOutput(slots, func(s providers.Slot) providers.ServerAttrs {
		ref := ResourceType + "." + s.Resource + "."
		return providers.ServerAttrs{
			ServerID:    tofu.Expr(ref + "id"),
			PublicIP:    tofu.Expr(ref + "public_ip"),
			PrivateIP:   tofu.Expr(ref + "private_ip"),
			Zone:        tofu.Expr(ref + "availability_zone"),
			Region:      inf.Region,
			Machine:     tofu.Expr(ref + "instance_type"),
			DisplayName: tofu.Expr(`try(` + ref + `tags["Name"], null)`),
		}
	})}
	return cfg, nil
}

const (
	imageField = "infrastructure.image"
	imageWant  = "an AMI id like ami-0123456789abcdef0, to create servers from"
)

var _ providers.RequiredSettings = (*Provider)(nil)

// Required names infrastructure.image when it is empty: an instance is
// created from an AMI, and there is no default one.
func (*Provider) Required(p *nodes.Platform) []providers.Required {
	if p == nil || p.Infrastructure.Image != "" {
		return nil
	}
	return []providers.Required{{Field: imageField, Want: imageWant}}
}

// Destructive names ami, user_data and user_data_base64 of aws_instance.
// The aws_instance documentation (hashicorp/aws 5.x) marks ami as forcing
// a new resource, and user_data and user_data_base64 as replacing the
// instance when user_data_replace_on_change is set, else stopping and
// starting it; either way the instance is not the one it was, so a plan
// that changes them in place is treated as destructive. instance_type is a
// stop, resize and start, not destructive.
func (*Provider) Destructive() tofu.DestructiveFunc {
	return tofu.DestructiveAttrs(map[string][]string{ResourceType: {"ami", "user_data", "user_data_base64"}})
}

var idRE = regexp.MustCompile(`^i-([0-9a-f]{8}|[0-9a-f]{17})$`)

// ValidateServerID accepts an EC2 instance id: i- and 8 or 17 lower-case
// hex digits, like i-0123456789abcdef0.
//
// Errors: [providers.ErrInvalidServerID].
func (*Provider) ValidateServerID(id string) error {
	if !idRE.MatchString(id) {
		return fmt.Errorf("server id %q: %w: want an EC2 instance id like i-0123456789abcdef0 (i- and 8 or 17 hex digits)", id, providers.ErrInvalidServerID)
	}
	return nil
}

// Servers decodes the servers output.
//
// Errors: [providers.ErrBadOutput].
func (*Provider) Servers(outputs map[string]tofu.OutputValue) ([]providers.Server, error) {
	return providers.DecodeServers(outputs)
}
