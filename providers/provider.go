package providers

import (
	"errors"
	"iter"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/tofu"
)

// Sentinel errors; compare with errors.Is.
var (
	// ErrNoCredentials: a credential the provider needs is set neither
	// in the environment nor in platform.yaml.
	ErrNoCredentials = errors.New("no credentials")
	// ErrKeyringRef: a credential is a "{{ .keyring.* }}" reference,
	// which this program does not resolve and never sends to a cloud.
	ErrKeyringRef = errors.New("credential is a keyring reference")
	// ErrInvalidServerID: a server id does not have the provider's form.
	ErrInvalidServerID = errors.New("invalid server id")
	// ErrNoInfrastructure: the provider makes no servers (manual).
	ErrNoInfrastructure = errors.New("no infrastructure")
	// ErrInvalidInput: an [Input] is inconsistent (no platform, a bad
	// pool name, an adopted server of an unknown pool, a duplicate).
	ErrInvalidInput = errors.New("invalid input")
	// ErrBadOutput: the servers output is missing or malformed.
	ErrBadOutput = errors.New("bad servers output")
)

// OutputName is the root module output every configuration declares: a
// map keyed by hostname of the servers' attributes, decoded by
// [Provider.Servers].
const OutputName = "servers"

// Provider is one infrastructure provider. Implementations are stateless
// values, safe for concurrent use, gathered into a [Set].
type Provider interface {
	// Name is the provider's name, as in platform.yaml's
	// infrastructure.metal_provider ("hetzner").
	Name() string

	// Requirement is the OpenTofu provider source and version
	// constraint; the zero value for a provider with no plugin (manual).
	Requirement() tofu.RequiredProvider

	// Credentials returns the environment variables tofu needs to reach
	// the provider: each one from getenv when set there, else from
	// infrastructure.api in p. Credentials are never written into the
	// configuration nor put into an error.
	//
	// Errors: [ErrNoCredentials] naming the variables to set;
	// [ErrKeyringRef] for a "{{ .keyring.* }}" value.
	Credentials(p *nodes.Platform, getenv func(string) string) (map[string]string, error)

	// Configure turns the pools and the servers to adopt into a complete
	// configuration: required_providers, the provider block, one
	// resource per server (adopted ones with an import block), and the
	// [OutputName] output.
	//
	// Errors: [ErrInvalidInput]; [ErrNoInfrastructure] for manual.
	Configure(in Input) (*tofu.Config, error)

	// Destructive reports which in-place updates reinstall or wipe a
	// server, for [tofu.Classify].
	Destructive() tofu.DestructiveFunc

	// ValidateServerID checks id has the provider's form.
	//
	// Errors: [ErrInvalidServerID], saying what would be valid.
	ValidateServerID(id string) error

	// Servers decodes the [OutputName] output of an applied
	// configuration, sorted by hostname.
	//
	// Errors: [ErrBadOutput].
	Servers(outputs map[string]tofu.OutputValue) ([]Server, error)
}

// Input is what [Provider.Configure] turns into a configuration.
type Input struct {
	// Platform is the platform; its Name prefixes resource names and
	// hostnames, its Infrastructure gives endpoint, location, image and
	// SSH key.
	Platform *nodes.Platform
	// Pools are the pools to configure, by name (usually
	// Platform.Pools).
	Pools map[string]nodes.Pool
	// Existing are the servers already made, adopted by server id.
	Existing []Existing
	// ImportOnly adopts the Existing servers and creates nothing, as
	// join does: pool counts are ignored.
	ImportOnly bool
}

// Existing is a server that already exists, adopted with an import block.
type Existing struct {
	// Pool is the pool the server belongs to.
	Pool string
	// Index is the server's 0-based slot in its pool: its resource is
	// named with Index+1, as a server created in that slot is, so a
	// server made by provision keeps its address when adopted.
	Index int
	// Hostname is the node's hostname; empty means the generated
	// <platform>-<pool>-<NNN>. Providers with a display name set it.
	Hostname string
	// ServerID is the provider's id of the server, the import id.
	ServerID string
}

// Server is one server of an applied configuration, as decoded from the
// [OutputName] output.
type Server struct {
	// Hostname is the node's hostname, the key of the output map.
	Hostname string `json:"hostname"`
	// ServerID is the provider's stable id of the server.
	ServerID string `json:"server_id"`
	// PublicIP is the public IPv4 address, if any.
	PublicIP string `json:"public_ip"`
	// PrivateIP is the provider-given private address, if any; empty
	// means the caller allocates one from the pool.
	PrivateIP string `json:"private_ip"`
	// Zone is the provider's datacenter or location (not a topology
	// zone).
	Zone string `json:"zone"`
	// Region is the provider's region, if it has one.
	Region string `json:"region"`
	// Machine is the provider's machine type.
	Machine string `json:"machine"`
	// Pool is the pool the server belongs to.
	Pool string `json:"pool"`
	// DisplayName is the provider's display name of the server.
	DisplayName string `json:"display_name"`
	// MAC is the MAC address of the interface the server boots and is
	// installed over (bare metal), written as the node's private_mac.
	MAC string `json:"mac,omitempty"`
	// PublicMAC is the MAC address of the public interface, written as
	// the node's public_mac.
	PublicMAC string `json:"public_mac,omitempty"`
	// Disks are the device paths of the server's disks ("/dev/nvme0n1"),
	// written as the node's disks.
	Disks []string `json:"disks,omitempty"`
	// Datacenter is the provider's datacenter name, written as
	// provider_metadata.datacenter ([StateEnricher]).
	Datacenter string `json:"datacenter,omitempty"`
	// OfferID is the provider's offer (plan code) the server was ordered
	// with, written as provider_metadata.offer_id ([StateEnricher]).
	OfferID string `json:"offer_id,omitempty"`
}

// StateEnricher is implemented by providers whose state holds node
// fields the servers output does not give. After an apply, every managed
// resource of the state is offered to EnrichFromState; what it returns is
// merged into the server of the same id (empty fields keep the output's
// values).
type StateEnricher interface {
	// EnrichFromState returns the server a state resource of type typ
	// with attribute values attrs is, with the fields it gives; ok is
	// false for a resource that is not one of the provider's servers.
	EnrichFromState(typ string, attrs map[string]any) (s Server, ok bool)
}

// Enrich merges into each of servers what e reads from the state
// resources (type and attribute values), matched by server id.
func Enrich(e StateEnricher, servers []Server, resources iter.Seq2[string, map[string]any]) {
	byID := map[string]Server{}
	for typ, attrs := range resources {
		if s, ok := e.EnrichFromState(typ, attrs); ok && s.ServerID != "" {
			byID[s.ServerID] = s
		}
	}
	for i := range servers {
		x, ok := byID[servers[i].ServerID]
		if !ok {
			continue
		}
		for _, f := range []struct {
			dst *string
			v   string
		}{
			{&servers[i].PublicIP, x.PublicIP}, {&servers[i].Datacenter, x.Datacenter}, {&servers[i].Region, x.Region},
			{&servers[i].OfferID, x.OfferID}, {&servers[i].Zone, x.Zone}, {&servers[i].Machine, x.Machine},
		} {
			if f.v != "" {
				*f.dst = f.v
			}
		}
	}
}

// HostnameDeriver is implemented by providers whose server ids are not
// hostnames (an OVH service name, a zoned Scaleway id): it names the
// node of a joined server that has no display name usable as one.
type HostnameDeriver interface {
	// DeriveHostname returns an RFC 1123 label naming the server id,
	// or "" when it derives none.
	DeriveHostname(serverID string) string
}

// DerivedHostname returns the hostname a joined server with id takes
// when it has no display name that is a hostname: what p derives when
// it is a [HostnameDeriver], else id itself when it is an RFC 1123
// label, else "".
func DerivedHostname(p Provider, id string) string {
	if d, ok := p.(HostnameDeriver); ok {
		if h := d.DeriveHostname(id); labelRE.MatchString(h) {
			return h
		}
		return ""
	}
	if labelRE.MatchString(id) {
		return id
	}
	return ""
}
