package nodes

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"
)

// Node is one machine of a platform, as stored in
// platforms/<platform>/nodes/<hostname>.yaml. Field names are those of
// plasmactl-node, in YAML and in JSON.
type Node struct {
	// Hostname is the node's name and its file name without ".yaml". A file
	// without hostname takes it from its name.
	Hostname string `yaml:"hostname" json:"hostname"`
	// Platform is the platform the node belongs to, derived from the folder
	// it is stored in; it is not written into the file.
	Platform string `yaml:"-" json:"platform,omitempty"`
	// Zones are the zone paths the node is allocated to, sorted.
	Zones []string `yaml:"zones,omitempty" json:"zones,omitempty"`
	// Machine is the provider's machine type (for example GP1-L).
	Machine string `yaml:"machine,omitempty" json:"machine,omitempty"`

	// Network holds the node's addresses.
	Network Network `yaml:"network" json:"network"`
	// Disks lists the node's disk devices, for example /dev/nvme0n1.
	Disks []string `yaml:"disks,omitempty" json:"disks,omitempty"`
	// ProviderMetadata is what the provider knows of the node.
	ProviderMetadata ProviderMetadata `yaml:"provider_metadata,omitempty" json:"provider_metadata,omitzero"`

	// Resources is the node's capacity.
	Resources Resources `yaml:"resources,omitempty" json:"resources,omitzero"`
	// Labels are free-form key-value labels of the node.
	Labels map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	// K8sLabels are the Kubernetes node labels, zone labels included.
	K8sLabels map[string]string `yaml:"k8s_labels,omitempty" json:"k8s_labels,omitempty"`
	// SSHHostKeys are the node's SSH host public keys ("TYPE BASE64"), as
	// its installer reported them and plasma-node refresh writes them.
	SSHHostKeys []string `yaml:"ssh_host_keys,omitempty" json:"ssh_host_keys,omitempty"`

	// InstallState is a bare-metal node's install state from its
	// node-provisioner registration (pending, consumed, installed), as
	// the list operation fills it in; it is not written into the file.
	InstallState string `yaml:"-" json:"install_state,omitempty"`

	// file is the path the node was loaded from, empty for a new node.
	file string
}

// File returns the path the node was loaded from, or "" for a node that was
// not loaded from a file.
func (n *Node) File() string { return n.file }

// String returns "hostname@platform", as plasmactl-node displays a node.
func (n *Node) String() string { return n.Hostname + "@" + n.Platform }

// Network holds a node's addresses.
type Network struct {
	// PublicIP is the node's public address.
	PublicIP string `yaml:"public_ip" json:"public_ip"`
	// PrivateIP is the node's address in the platform's private network.
	PrivateIP string `yaml:"private_ip" json:"private_ip"`
	// FailoverIP is a failover (floating) address routed to the node.
	FailoverIP string `yaml:"failover_ip,omitempty" json:"failover_ip,omitempty"`
	// PublicMAC is the MAC address of the public interface.
	PublicMAC string `yaml:"public_mac,omitempty" json:"public_mac,omitempty"`
	// PrivateMAC is the MAC address of the private interface.
	PrivateMAC string `yaml:"private_mac,omitempty" json:"private_mac,omitempty"`
	// PublicGateway is the gateway of the public network.
	PublicGateway string `yaml:"public_gateway,omitempty" json:"public_gateway,omitempty"`
	// PublicPrefix is the prefix length of the public network.
	PublicPrefix int `yaml:"public_prefix,omitempty" json:"public_prefix,omitempty"`
	// InstalledIP is the management address a bare-metal node's
	// installer reported (a DHCP install keeps the address the site's
	// DHCP gave it), as plasma-node refresh writes it.
	InstalledIP string `yaml:"installed_ip,omitempty" json:"installed_ip,omitempty"`
	// InstalledPrefix is InstalledIP's prefix length.
	InstalledPrefix int `yaml:"installed_prefix,omitempty" json:"installed_prefix,omitempty"`
	// NICNames are the names a bare-metal node's installer pinned for its
	// interfaces (network.interface-name-pinning), by MAC, as plasma-node
	// refresh writes them from the installer's report.
	NICNames map[string]string `yaml:"nic_names,omitempty" json:"nic_names,omitempty"`
}

// ProviderMetadata is what the infrastructure provider knows of a node.
// ServerID is the stable identity: a node is re-adopted by it on every run.
type ProviderMetadata struct {
	// Provider is the provider name, as in Infrastructure.MetalProvider.
	Provider string `yaml:"provider,omitempty" json:"provider,omitempty"`
	// ServerID is the provider's stable ID of the server.
	ServerID string `yaml:"server_id,omitempty" json:"server_id,omitempty"`
	// Datacenter is the provider's datacenter name.
	Datacenter string `yaml:"datacenter,omitempty" json:"datacenter,omitempty"`
	// Zone is the provider's datacenter zone (OVH dedicated_datacenter, for
	// example "bhs"), not a topology zone.
	Zone string `yaml:"zone,omitempty" json:"zone,omitempty"`
	// Region is the provider's region.
	Region string `yaml:"region,omitempty" json:"region,omitempty"`
	// OfferID is the provider's offer (plan) the server was ordered with.
	OfferID string `yaml:"offer_id,omitempty" json:"offer_id,omitempty"`
	// Machine is the provider's machine type.
	Machine string `yaml:"machine,omitempty" json:"machine,omitempty"`
}

// Resources describes a node's capacity.
type Resources struct {
	// CPU is the number of CPU cores.
	CPU int `yaml:"cpu,omitempty" json:"cpu,omitempty"`
	// Memory is the amount of memory, for example "64GB".
	Memory string `yaml:"memory,omitempty" json:"memory,omitempty"`
	// GPU names the GPU, if any.
	GPU string `yaml:"gpu,omitempty" json:"gpu,omitempty"`
}

// Platform is platforms/<platform>/platform.yaml, with the field names of
// plasmactl-platform's schema. Credentials never appear in JSON output.
type Platform struct {
	// Name is the platform's name and its folder under platforms/.
	Name string `yaml:"name" json:"name"`
	// Cluster is the name of the cluster the platform runs.
	Cluster string `yaml:"cluster,omitempty" json:"cluster,omitempty"`
	// Description is free text for people.
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// Infrastructure names the provider that makes the machines.
	Infrastructure Infrastructure `yaml:"infrastructure" json:"infrastructure"`
	// DNS is the platform's DNS zone.
	DNS DNS `yaml:"dns,omitempty" json:"dns,omitzero"`
	// Networking holds the private addressing.
	Networking Networking `yaml:"networking,omitempty" json:"networking,omitzero"`
	// Pools are the machine pools, by name.
	Pools map[string]Pool `yaml:"pools,omitempty" json:"pools,omitempty"`
	// Defaults are platform-wide defaults.
	Defaults Defaults `yaml:"defaults,omitempty" json:"defaults,omitzero"`
	// Features are platform switches.
	Features Features `yaml:"features,omitempty" json:"features,omitzero"`
	// Environment describes the kind of platform.
	Environment Environment `yaml:"environment,omitempty" json:"environment,omitzero"`

	file  string
	lines map[string]int
	// unknown are the keys no setting has ([Platform.UnknownKeys]).
	unknown []UnknownKey
}

// File returns the path the platform was loaded from.
func (p *Platform) File() string { return p.file }

// Line returns the line of platform.yaml where the value of field is,
// field being a dotted path of keys ("infrastructure.ssh_key_id"); 0
// when the platform was not loaded from a file or the file has no such
// key.
func (p *Platform) Line(field string) int { return p.lines[field] }

// UnknownKeys returns the keys of the platform's file, inside the
// sections this package reads, that no setting has (misspellings, most
// likely), in file order; none for a platform not loaded from a file.
func (p *Platform) UnknownKeys() []UnknownKey { return slices.Clone(p.unknown) }

// Infrastructure names the provider that makes the platform's machines.
type Infrastructure struct {
	// MetalProvider is the provider name: manual, scaleway, hetzner, ovh,
	// aws or pxe.
	MetalProvider string `yaml:"metal_provider" json:"metal_provider"`
	// API is the provider's endpoint and credentials.
	API API `yaml:"api,omitempty" json:"api,omitzero"`
	// Zone is the provider's datacenter (for example "bhs" or "fsn1").
	Zone string `yaml:"zone,omitempty" json:"zone,omitempty"`
	// Region is the provider's region.
	Region string `yaml:"region,omitempty" json:"region,omitempty"`
	// ProjectID is the provider's project or account ID.
	ProjectID string `yaml:"project_id,omitempty" json:"project_id,omitempty"`
	// Image is the OS image machines are installed with.
	Image string `yaml:"image,omitempty" json:"image,omitempty"`
	// SSHKeyID is the provider's ID of the SSH key put on machines.
	SSHKeyID string `yaml:"ssh_key_id,omitempty" json:"ssh_key_id,omitempty"`
	// PrivateVLANID is the VLAN ID of the private network.
	PrivateVLANID int `yaml:"private_vlan_id,omitempty" json:"private_vlan_id,omitempty"`
	// ProvisionerDir is node-provisioner's state folder, where provider
	// pxe writes the platform's registrations; relative to the project
	// folder. Default: node-provisioner's (/var/lib/node-provisioner).
	ProvisionerDir string `yaml:"provisioner_dir,omitempty" json:"provisioner_dir,omitempty"`
	// ProvisionerURL is node-provisioner's management API
	// (https://host:8091), through which provider pxe registers the
	// platform's machines when node-provisioner runs on another host. Its
	// bearer token comes from NODE_PROVISIONER_TOKEN only.
	ProvisionerURL string `yaml:"provisioner_url,omitempty" json:"provisioner_url,omitempty"`
	// ProvisionerFingerprint pins the API's certificate: its SHA-256
	// fingerprint as node-provisioner tls fingerprint prints it. Empty:
	// the system's certificate pool is trusted.
	ProvisionerFingerprint string `yaml:"provisioner_fingerprint,omitempty" json:"provisioner_fingerprint,omitempty"`
	// ProvisionerToken is read only to be refused: the token belongs in
	// NODE_PROVISIONER_TOKEN, not in platform.yaml.
	ProvisionerToken string `yaml:"provisioner_token,omitempty" json:"-"`
	// State is where OpenTofu keeps the platform's state.
	State State `yaml:"state,omitempty" json:"state,omitzero"`
}

// State is infrastructure.state: the OpenTofu state backend of a
// platform. The zero value is the local backend, whose state is
// transient (node files are the truth). Backend credentials are never
// read from here: pg takes its connection string from PG_CONN_STR, s3
// its keys from the usual AWS_* variables.
type State struct {
	// Backend is "local" (the default), "pg" or "s3".
	Backend string `yaml:"backend,omitempty" json:"backend,omitempty"`
	// SchemaName is the pg schema holding the state. Default:
	// plasma_node_<platform> ('-' as '_'), one per platform.
	SchemaName string `yaml:"schema_name,omitempty" json:"schema_name,omitempty"`
	// Bucket is the s3 bucket. Required for s3.
	Bucket string `yaml:"bucket,omitempty" json:"bucket,omitempty"`
	// Key is the s3 object key of the state. Default:
	// plasma-node/<platform>/terraform.tfstate.
	Key string `yaml:"key,omitempty" json:"key,omitempty"`
	// Region is the s3 bucket's region. Required for s3.
	Region string `yaml:"region,omitempty" json:"region,omitempty"`
	// Endpoint is an s3-compatible endpoint URL (MinIO, Ceph,
	// SeaweedFS); empty for AWS. With one, the backend is rendered to
	// work offline: path-style addressing and no STS, IAM or instance
	// metadata calls, no region check.
	Endpoint string `yaml:"endpoint,omitempty" json:"endpoint,omitempty"`
	// ConnStr, AccessKey and SecretKey are read only to be refused:
	// credentials belong in the environment, not in platform.yaml.
	ConnStr   string `yaml:"conn_str,omitempty" json:"-"`
	AccessKey string `yaml:"access_key,omitempty" json:"-"`
	SecretKey string `yaml:"secret_key,omitempty" json:"-"`
	// Unknown are the keys of the file's state block that are none of the
	// above, as "key (line N)"; a misspelled setting is refused rather than
	// ignored (the state would silently go elsewhere).
	Unknown []string `yaml:"-" json:"-"`
}

// stateKeys are the keys a state block may hold.
var stateKeys = map[string]bool{"backend": true, "schema_name": true, "bucket": true, "key": true, "region": true,
	"endpoint": true, "conn_str": true, "access_key": true, "secret_key": true}

// UnmarshalYAML decodes the block and records its unknown keys.
func (s *State) UnmarshalYAML(n *yaml.Node) error {
	type plain State
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*s = State(p)
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; !stateKeys[k.Value] {
				s.Unknown = append(s.Unknown, fmt.Sprintf("%s (line %d)", k.Value, k.Line))
			}
		}
	}
	return nil
}

// API is a provider's endpoint and credentials. Credentials are usually
// references such as "{{ .keyring.ovh_client_id }}" and are never shown in
// JSON output.
type API struct {
	// URI is the provider's API endpoint.
	URI string `yaml:"uri,omitempty" json:"uri,omitempty"`
	// Token is an API token (a credential: never printed).
	Token string `yaml:"token,omitempty" json:"-"`
	// ClientID is an API client ID (a credential: never printed).
	ClientID string `yaml:"client_id,omitempty" json:"-"`
	// ClientSecret is an API client secret (a credential: never printed).
	ClientSecret string `yaml:"client_secret,omitempty" json:"-"`
	// AccessKey is an API access key (a credential: never printed).
	AccessKey string `yaml:"access_key,omitempty" json:"-"`
	// SecretKey is an API secret key (a credential: never printed).
	SecretKey string `yaml:"secret_key,omitempty" json:"-"`
}

// DNS is the platform's DNS zone.
type DNS struct {
	// Provider is the DNS provider's name.
	Provider string `yaml:"provider,omitempty" json:"provider,omitempty"`
	// Domain is the platform's domain name.
	Domain string `yaml:"domain,omitempty" json:"domain,omitempty"`
	// Zone is the provider's DNS zone name or ID.
	Zone string `yaml:"zone,omitempty" json:"zone,omitempty"`
	// API is the DNS provider's endpoint and credentials.
	API API `yaml:"api,omitempty" json:"api,omitzero"`
	// Region is the DNS provider's region.
	Region string `yaml:"region,omitempty" json:"region,omitempty"`
	// DKIMKey is the domain's DKIM key.
	DKIMKey string `yaml:"dkim_key,omitempty" json:"dkim_key,omitempty"`
}

// Networking holds the platform's private addressing.
type Networking struct {
	// PrivateNetwork is the CIDR private IPs are allocated from when no
	// named pool is used. Default: 192.168.0.0/16.
	PrivateNetwork string `yaml:"private_network,omitempty" json:"private_network,omitempty"`
	// PrivateVIPNetwork is the CIDR of virtual IPs; no allocation uses it.
	PrivateVIPNetwork string `yaml:"private_vip_network,omitempty" json:"private_vip_network,omitempty"`
	// IPPools are named address pools (an extension of plasmactl-node's
	// single private_network). A machine pool picks one with ip_pool.
	IPPools map[string]IPPool `yaml:"ip_pools,omitempty" json:"ip_pools,omitempty"`
	// InstallNetwork names the networking.ip_pools entry a pxe platform's
	// machines are installed on with static addresses: each machine's
	// answer then carries its node's private_ip, with the pool's prefix
	// length, gateway and dns, instead of taking the site DHCP server's
	// lease. The platform's pools must take their addresses from it.
	// Empty: addresses by DHCP.
	InstallNetwork string `yaml:"install_network,omitempty" json:"install_network,omitempty"`
}

// IPPool is a named private address pool.
type IPPool struct {
	// CIDR is the pool's network, IPv4 or IPv6.
	CIDR string `yaml:"cidr" json:"cidr"`
	// Range limits allocation to "first-last" inside CIDR.
	Range string `yaml:"range,omitempty" json:"range,omitempty"`
	// Exclude lists addresses or "first-last" ranges never handed out.
	Exclude []string `yaml:"exclude,omitempty" json:"exclude,omitempty"`
	// Gateway is never handed out; it is the default gateway of the
	// machines installed on the pool when it is the install network.
	Gateway string `yaml:"gateway,omitempty" json:"gateway,omitempty"`
	// DNS is the DNS server of the machines installed on the pool when
	// it is the install network: one address.
	DNS string `yaml:"dns,omitempty" json:"dns,omitempty"`
}

// Pool is a group of like machines in zones: pools.<name> in platform.yaml.
type Pool struct {
	// Zones are the zone paths the pool's machines are allocated to.
	Zones []string `yaml:"zones" json:"zones"`
	// Machine is the provider's machine type of the pool.
	Machine string `yaml:"machine" json:"machine"`
	// Count is the number of machines the pool should have.
	Count int `yaml:"count" json:"count"`
	// IPPool names the networking.ip_pools entry the pool's private IPs come
	// from; empty means networking.private_network.
	IPPool string `yaml:"ip_pool,omitempty" json:"ip_pool,omitempty"`
	// Hardware lists the bare-metal machines new servers of the pool are
	// taken from, in order (provider pxe).
	Hardware []Machine `yaml:"hardware,omitempty" json:"hardware,omitempty"`
}

// Machine is one bare-metal machine of a hardware list (provider pxe):
// what its node-provisioner registration pins and where the system and
// the data pools go. It needs at least one of MACs, Serial and UUID.
type Machine struct {
	// Pool, in a hardware file, keeps the machine for that pool; empty
	// means any pool. A pool's own list in platform.yaml leaves it empty.
	Pool string `yaml:"pool,omitempty" json:"pool,omitempty"`
	// MACs are the machine's network interfaces (aa:bb:cc:dd:ee:ff).
	MACs []string `yaml:"macs,omitempty" json:"macs,omitempty"`
	// Serial is the machine's DMI system serial.
	Serial string `yaml:"serial,omitempty" json:"serial,omitempty"`
	// UUID is the machine's DMI system UUID.
	UUID string `yaml:"uuid,omitempty" json:"uuid,omitempty"`
	// BootDisk is the disk for the system: a serial, a kernel name (sda)
	// or any; empty means chosen on the console.
	BootDisk string `yaml:"boot_disk,omitempty" json:"boot_disk,omitempty"`
	// DataPools are data pool specs NAME=LAYOUT:DISK[,DISK...], created
	// on first boot.
	DataPools []string `yaml:"data_pools,omitempty" json:"data_pools,omitempty"`
	// ManagementMAC is the NIC a static address goes on (the platform's
	// install network), one of MACs; empty means the first of them.
	ManagementMAC string `yaml:"management_mac,omitempty" json:"management_mac,omitempty"`
	// BootMethod is how the machine reaches the installer: "network"
	// (PXE on the provisioner's segment) or "virtual-media" (its Redfish
	// BMC lends it the installer as a virtual CD); empty leaves it to the
	// provisioner's site setting.
	BootMethod string `yaml:"boot_method,omitempty" json:"boot_method,omitempty"`
	// MediaAnswer is how an installer booted from virtual media gets its
	// answer: "iso" (on the node's own medium; no DHCP needed) or "http"
	// (fetched from the provisioner; needs DHCP, not PXE); empty leaves
	// it to the provisioner's site setting, else iso.
	MediaAnswer string `yaml:"media_answer,omitempty" json:"media_answer,omitempty"`
}

// Defaults are platform-wide defaults.
type Defaults struct {
	// Zone is the zone a node gets when none is given.
	Zone string `yaml:"zone,omitempty" json:"zone,omitempty"`
	// Capabilities are the capabilities nodes get by default.
	Capabilities []string `yaml:"capabilities,omitempty" json:"capabilities,omitempty"`
	// Resources is the default node capacity.
	Resources Resources `yaml:"resources,omitempty" json:"resources,omitzero"`
}

// Features are platform switches.
type Features struct {
	// DisplayOSRebuildConfirmation asks for confirmation before an OS rebuild.
	DisplayOSRebuildConfirmation bool `yaml:"display_os_rebuild_confirmation,omitempty" json:"display_os_rebuild_confirmation,omitempty"`
	// DisplayDataWipeConfirmation asks for confirmation before a data wipe.
	DisplayDataWipeConfirmation bool `yaml:"display_data_wipe_confirmation,omitempty" json:"display_data_wipe_confirmation,omitempty"`
	// OSWipeData wipes the data disks when the OS is reinstalled.
	OSWipeData bool `yaml:"os_wipe_data,omitempty" json:"os_wipe_data,omitempty"`
}

// Environment describes the kind of platform.
type Environment struct {
	// Type is the kind of environment, for example "production".
	Type string `yaml:"type,omitempty" json:"type,omitempty"`
	// AutoDeploy deploys changes without a manual step.
	AutoDeploy bool `yaml:"auto_deploy,omitempty" json:"auto_deploy,omitempty"`
	// MonitoringLevel is how closely the platform is monitored.
	MonitoringLevel string `yaml:"monitoring_level,omitempty" json:"monitoring_level,omitempty"`
}
