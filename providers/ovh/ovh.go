package ovh

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
	Name = "ovh"
	// ResourceType is the resource every server is.
	ResourceType = "ovh_dedicated_server"
	// DefaultOS is installed when infrastructure.image is empty.
	DefaultOS = "debian12_64"
)

// Provider is the OVHcloud dedicated server provider, of ovh/ovh >=
// 2.11.0 as the anchor pins it. The zero value is ready to use.
type Provider struct{ providers.Plugin[cloud] }

var _ providers.Provider = (*Provider)(nil)

type cloud struct{}

// Cloud: OVH_ENDPOINT (environment, else "ovh-<region>" from
// infrastructure.region, else "ovh-eu") and one credential set, the
// first found: OAuth2 OVH_CLIENT_ID and OVH_CLIENT_SECRET (or
// infrastructure.api.client_id and client_secret); the application keys
// OVH_APPLICATION_KEY, OVH_APPLICATION_SECRET and OVH_CONSUMER_KEY
// (environment only); or an OVH_ACCESS_TOKEN (or infrastructure.api.token).
// None is [providers.ErrNoCredentials] naming the variables of each set.
func (cloud) Cloud() providers.Cloud {
	return providers.Cloud{Name: Name, Requirement: tofu.RequiredProvider{Name: "ovh", Source: "ovh/ovh", Version: ">= 2.11.0"}, EndpointAttr: "endpoint", Credentials: credentials}
}

func credentials(inf nodes.Infrastructure, getenv func(string) string) ([]providers.Credential, error) {
	api, region := inf.API, inf.Region
	endpoint := "ovh-eu"
	if r, ok := regions[region]; ok {
		endpoint = r.endpoint
	} else if region != "" {
		endpoint = "ovh-" + region
	}
	var set []providers.Credential
	switch {
	case getenv("OVH_CLIENT_ID") != "" || api.ClientID != "":
		set = []providers.Credential{
			{Env: "OVH_CLIENT_ID", Field: "infrastructure.api.client_id", Value: api.ClientID},
			{Env: "OVH_CLIENT_SECRET", Field: "infrastructure.api.client_secret", Value: api.ClientSecret},
		}
	case getenv("OVH_APPLICATION_KEY") != "":
		set = []providers.Credential{{Env: "OVH_APPLICATION_KEY"}, {Env: "OVH_APPLICATION_SECRET"}, {Env: "OVH_CONSUMER_KEY"}}
	case getenv("OVH_ACCESS_TOKEN") != "" || api.Token != "":
		set = []providers.Credential{{Env: "OVH_ACCESS_TOKEN", Field: "infrastructure.api.token", Value: api.Token}}
	default:
		return nil, fmt.Errorf("%s credentials: %w: set OVH_CLIENT_ID and OVH_CLIENT_SECRET (or infrastructure.api.client_id and client_secret), or OVH_APPLICATION_KEY, OVH_APPLICATION_SECRET and OVH_CONSUMER_KEY", Name, providers.ErrNoCredentials)
	}
	return append(set, providers.Credential{Env: "OVH_ENDPOINT", Field: "infrastructure.region", Value: endpoint}), nil
}

// Configure returns, as the anchor's template: for each fresh slot an
// ovh_dedicated_server ordered with plan = [{plan_code = machine,
// duration = "P1M", pricing_mode = "default", configuration =
// dedicated_datacenter (infrastructure.zone), dedicated_os none_64.en,
// region (the order region of infrastructure.region: europe, canada)}], ovh_subsidiary from data.ovh_me,
// display_name = hostname, os = infrastructure.image (default
// [DefaultOS]), customizations = {hostname, ssh_key (infrastructure.
// ssh_key_id)}, ignore_changes = [display_name]; for each adopted one an
// import block by service name and a resource with service_name,
// prevent_install_on_import = true, display_name = hostname and every
// other argument ignored. Each server has the data sources its node's
// MACs and disks are read from. The provider
// block sets endpoint from infrastructure.api.uri when set.
//
// Errors: [providers.ErrInvalidInput].
func (p *Provider) Configure(in providers.Input) (*tofu.Config, error) {
	slots, cfg, err := p.Start(in)
	if err != nil {
		return nil, err
	}
	inf := in.Platform.Infrastructure
	osName := inf.Image
	if osName == "" {
		osName = DefaultOS
	}
	fresh := false
	for _, s := range slots {
		r := tofu.Resource{Type: ResourceType, Name: s.Resource}
		if s.Adopted() {
			r.Attrs = map[string]any{"service_name": s.ServerID, "prevent_install_on_import": true, "display_name": s.Hostname}
			r.Lifecycle = &tofu.Lifecycle{IgnoreChanges: adoptedIgnores}
			cfg.Imports = append(cfg.Imports, tofu.Import{To: r.Address(), ID: s.ServerID})
			cfg.Resources = append(cfg.Resources, r)
			continue
		}
		fresh = true
		conf := []map[string]string{}
		if inf.Zone != "" {
			conf = append(conf, map[string]string{"label": "dedicated_datacenter", "value": inf.Zone})
		}
		conf = append(conf, map[string]string{"label": "dedicated_os", "value": "none_64.en"})
		if r := regions[inf.Region]; r.order != "" {
			conf = append(conf, map[string]string{"label": "region", "value": r.order})
		}
		cust := map[string]any{"hostname": s.Hostname}
		if inf.SSHKeyID != "" {
			cust["ssh_key"] = inf.SSHKeyID
		}
		r.Attrs = map[string]any{
			"ovh_subsidiary": tofu.Expr("data.ovh_me.account.ovh_subsidiary"),
			"display_name":   s.Hostname,
			"os":             osName,
			"customizations": cust,
			"plan": []any{map[string]any{
				"plan_code": s.Machine, "duration": "P1M", "pricing_mode": "default", "configuration": conf,
			}},
		}
		r.Lifecycle = &tofu.Lifecycle{IgnoreChanges: []string{"display_name"}}
		cfg.Resources = append(cfg.Resources, r)
	}
	if fresh {
		cfg.Data = []tofu.Resource{{Type: "ovh_me", Name: "account"}}
	}
	cfg.Data = append(cfg.Data, enrichment(slots)...)
	cfg.Outputs = []tofu.Output{providers.ServersOutput(slots, func(s providers.Slot) providers.ServerAttrs {
		ref := ResourceType + "." + s.Resource + "."
		srv, hw := "data."+serverData+"."+s.Resource, "data."+hardwareData+"."+s.Resource
		return providers.ServerAttrs{
			ServerID:    tofu.Expr(ref + "service_name"),
			PublicIP:    tofu.Expr(ref + "ip"),
			Zone:        tofu.Expr(ref + "datacenter"),
			Region:      tofu.Expr(ref + "region"),
			Machine:     s.Machine,
			DisplayName: tofu.Expr(ref + "display_name"),
			PublicMAC:   tofu.Expr(vniMAC(srv, "public")),
			MAC:         tofu.Expr(vniMAC(srv, "vrack")),
			Disks:       tofu.Expr(diskPaths(hw)),
		}
	})}
	return cfg, nil
}

// adoptedIgnores are the arguments of an adopted server left as they
// are: every one but service_name and display_name, so adopting never
// reinstalls, reboots or reorders, and the node's hostname is written
// back as the display name (PUT /services/{serviceId}).
var adoptedIgnores = []string{"boot_id", "boot_script", "customizations", "efi_bootloader_path", "monitoring",
	"no_intervention", "os", "ovh_subsidiary", "plan", "plan_option", "prevent_install_on_import", "properties", "range",
	"state", "storage"}

// The data sources that read what join records of a server, as the
// anchor's join does from the API: its virtual network interfaces
// (GET /dedicated/server/{name}/virtualNetworkInterface and each
// interface, whose networkInterfaceController lists its MAC) and its
// hardware specification (GET .../specifications/hardware, whose disk
// group gives the disks' type and number).
const (
	serverData   = "ovh_dedicated_server"
	hardwareData = "ovh_dedicated_server_specifications_hardware"
)

// enrichment returns, per slot, the data sources of [serverData] and
// [hardwareData]: by the service name of an adopted server (read at
// plan time), by the resource's of a new one (read once it exists).
func enrichment(slots []providers.Slot) []tofu.Resource {
	var out []tofu.Resource
	for _, s := range slots {
		var name any = tofu.Expr(ResourceType + "." + s.Resource + ".service_name")
		if s.Adopted() {
			name = s.ServerID
		}
		for _, typ := range []string{serverData, hardwareData} {
			out = append(out, tofu.Resource{Type: typ, Name: s.Resource, Attrs: map[string]any{"service_name": name}})
		}
	}
	return out
}

// vniMAC is the expression of the MAC of the enabled virtual network
// interface of mode ("public", "vrack") of data source srv, or null.
func vniMAC(srv, mode string) string {
	return fmt.Sprintf(`try([for v in %s.vnis : v.nics[0] if v.mode == %q && v.enabled][0], null)`, srv, mode)
}

// diskPaths is the expression of the disk paths of hardware data source
// hw, as the anchor names them: /dev/nvme<i>n1 when its first disk group
// is NVMe, else /dev/sda, /dev/sdb, ...
func diskPaths(hw string) string {
	g := hw + ".disk_groups[0]"
	return fmt.Sprintf(`try([for i in range(%[1]s.number_of_disks) : lower(%[1]s.disk_type) == "nvme" ? "/dev/nvme${i}n1" : "/dev/sd${substr("abcdefghijklmnopqrstuvwxyz", i, 1)}"], null)`, g)
}

// Destructive names what the plugin (terraform-provider-ovh 2.19,
// ovh_dedicated_server's Update) applies by POST
// /dedicated/server/{service_name}/reinstall, which wipes the disks: a
// change of customizations, storage or properties, and of os to a
// non-empty value (an os removed from the configuration reinstalls
// nothing). boot_id is not destructive: it is a PUT
// /dedicated/server/{service_name} that takes effect at the next boot;
// display_name, monitoring and no_intervention are plain updates.
// service_name, plan and ovh_subsidiary force a new server, which tofu
// plans as a replacement; service_name is listed too, so that a plugin
// that ever applied it in place would still be caught.
func (*Provider) Destructive() tofu.DestructiveFunc {
	return tofu.DestructiveRules(map[string][]tofu.DestructiveRule{ResourceType: {
		{Attrs: []string{"customizations", "storage", "properties", "service_name"}},
		{Attrs: []string{"os"}, When: tofu.AfterSet("os")},
	}})
}

// region is what infrastructure.region means for OVH: the API endpoint
// (go-ovh's endpoint names) and the value of the order's "region"
// configuration, which the plugin passes to the cart as it is
// (POST /order/cart/{cartId}/item/{itemId}/configuration) and whose
// acceptance tests give as "europe" and "canada".
type region struct{ endpoint, order string }

// regions are the values infrastructure.region may take: the endpoint
// suffix (eu, ca, us) or the order region name (europe, canada). The US
// API's order region name is not in the plugin's sources, so no region
// configuration is sent there.
var regions = map[string]region{
	"":       {"ovh-eu", ""},
	"eu":     {"ovh-eu", "europe"},
	"europe": {"ovh-eu", "europe"},
	"ca":     {"ovh-ca", "canada"},
	"canada": {"ovh-ca", "canada"},
	"us":     {"ovh-us", ""},
}

var _ providers.PlatformValidator = (*Provider)(nil)

// ValidatePlatform checks infrastructure.region is one OVH knows: eu or
// europe, ca or canada, us.
//
// Errors: [*providers.SettingError].
func (*Provider) ValidatePlatform(p *nodes.Platform) error {
	if p == nil {
		return nil
	}
	if _, ok := regions[p.Infrastructure.Region]; !ok {
		return providers.NewSettingError(p, "infrastructure.region", p.Infrastructure.Region,
			"an OVH region: eu (or europe), ca (or canada) or us")
	}
	return nil
}

// idRE is an OVH dedicated server's service name: ns<N>.ip-<a>-<b>-<c>
// under .net, or under .eu, the form the plugin's own documentation
// uses (nsXXXX.ip-A-B-C.eu).
var idRE = regexp.MustCompile(`^(ns\d+)\.ip-(\d{1,3}-){2}\d{1,3}\.(net|eu)$`)

// ValidateServerID accepts an OVH dedicated server service name, like
// ns1234567.ip-1-2-3.net or ns1234567.ip-1-2-3.eu.
//
// Errors: [providers.ErrInvalidServerID].
func (*Provider) ValidateServerID(id string) error {
	if !idRE.MatchString(id) {
		return fmt.Errorf("server-id %q: %w: not a valid OVH service name (want ns<N>.ip-<a>-<b>-<c>.net or .eu, like ns1234567.ip-1-2-3.net); use the canonical name from GET /dedicated/server, not the numeric admin-panel ID", id, providers.ErrInvalidServerID)
	}
	return nil
}

var _ providers.HostnameDeriver = (*Provider)(nil)

// DeriveHostname returns the first label of a service name, ns1234567
// for ns1234567.ip-1-2-3.net, or "" for an id that is not one.
func (*Provider) DeriveHostname(id string) string {
	m := idRE.FindStringSubmatch(id)
	if m == nil {
		return ""
	}
	return m[1]
}

// Servers decodes the servers output.
//
// Errors: [providers.ErrBadOutput].
func (*Provider) Servers(outputs map[string]tofu.OutputValue) ([]providers.Server, error) {
	return providers.DecodeServers(outputs)
}

var _ providers.StateEnricher = (*Provider)(nil)

// EnrichFromState reads an ovh_dedicated_server's state as the anchor's
// output and join enrichment do: service_name is the server id, ip the
// public IP, datacenter the datacenter (also the provider zone, as
// infrastructure.zone names it), region the region, and the plan_code of
// its first plan the offer and machine type.
func (*Provider) EnrichFromState(typ string, attrs map[string]any) (providers.Server, bool) {
	if typ != ResourceType {
		return providers.Server{}, false
	}
	str := func(m map[string]any, k string) string {
		s, _ := m[k].(string)
		return s
	}
	s := providers.Server{
		ServerID:   str(attrs, "service_name"),
		PublicIP:   str(attrs, "ip"),
		Datacenter: str(attrs, "datacenter"),
		Zone:       str(attrs, "datacenter"),
		Region:     str(attrs, "region"),
	}
	if plans, ok := attrs["plan"].([]any); ok && len(plans) > 0 {
		if p, ok := plans[0].(map[string]any); ok {
			s.OfferID = str(p, "plan_code")
			s.Machine = s.OfferID
		}
	}
	return s, s.ServerID != ""
}
