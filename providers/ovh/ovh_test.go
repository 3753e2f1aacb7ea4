package ovh_test

import (
	"errors"
	"flag"
	"path/filepath"
	"testing"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/internal/providertest"
	"github.com/plasmactl/plasma-node/providers/ovh"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Arguments of ovh_dedicated_server, from
// https://registry.terraform.io/providers/ovh/ovh/latest/docs/resources/dedicated_server
// (none is required by the schema: a server is either ordered with plan
// and ovh_subsidiary, or adopted with service_name).
var schema = map[string]providertest.Schema{ovh.ResourceType: {
	Required: []string{"ovh_subsidiary", "plan"},
	Optional: []string{"service_name", "display_name", "os", "customizations", "boot_id", "boot_script",
		"efi_bootloader_path", "monitoring", "no_intervention", "prevent_install_on_create",
		"prevent_install_on_import", "properties", "storage", "plan_option", "state", "range"},
}}

func TestConfigureMatchesGoldenAndSchema(t *testing.T) {
	plat := &nodes.Platform{Name: "prod", Infrastructure: nodes.Infrastructure{MetalProvider: "ovh", Zone: "bhs", Region: "ca", SSHKeyID: "ssh-ed25519 AAAA"}}
	pools := map[string]nodes.Pool{"control": {Zones: []string{"prod.control"}, Machine: "24adv01", Count: 2}}
	tests := map[string]struct {
		in   providers.Input
		file string
	}{
		"fresh servers are ordered by plan code": {providers.Input{Platform: plat, Pools: pools}, "fresh.tf"},
		"an existing server is adopted, only its display name managed": {providers.Input{Platform: plat, Pools: pools,
			Existing: []providers.Existing{{Pool: "control", Index: 0, ServerID: "ns1234567.ip-1-2-3.net"}}}, "adopt.tf"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			providertest.CheckConfigure(t, &ovh.Provider{}, tc.in, filepath.Join("testdata", tc.file), schema, 2, *update)
		})
	}
}

func TestValidateServerID(t *testing.T) {
	tests := map[string]struct {
		id string
		ok bool
	}{
		"a canonical service name is valid": {"ns1234567.ip-1-2-3.net", true},
		"the numeric admin id is refused":   {"1234567", false},
		"a .eu service name is valid":       {"ns1.ip-1-2-3.eu", true},
		"a wrong domain is refused":         {"ns1.ip-1-2-3.com", false},
		"a name without ns is refused":      {"srv1.ip-1-2-3.net", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := (&ovh.Provider{}).ValidateServerID(tc.id)
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, providers.ErrInvalidServerID)) {
				t.Errorf("ValidateServerID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := map[string]struct {
		plat    *nodes.Platform
		getenv  func(string) string
		want    map[string]string
		wantErr error
	}{
		"oauth2 from platform.yaml with the region's endpoint": {
			plat: &nodes.Platform{Infrastructure: nodes.Infrastructure{Region: "ca", API: nodes.API{ClientID: "cid", ClientSecret: "csec"}}},
			want: map[string]string{"OVH_CLIENT_ID": "cid", "OVH_CLIENT_SECRET": "csec", "OVH_ENDPOINT": "ovh-ca"},
		},
		"application keys from the environment": {
			plat:   &nodes.Platform{},
			getenv: env(map[string]string{"OVH_APPLICATION_KEY": "a", "OVH_APPLICATION_SECRET": "b", "OVH_CONSUMER_KEY": "c"}),
			want:   map[string]string{"OVH_APPLICATION_KEY": "a", "OVH_APPLICATION_SECRET": "b", "OVH_CONSUMER_KEY": "c", "OVH_ENDPOINT": "ovh-eu"},
		},
		"a keyring reference is refused": {
			plat:    &nodes.Platform{Infrastructure: nodes.Infrastructure{API: nodes.API{ClientID: "{{ .keyring.ovh_client_id }}", ClientSecret: "x"}}},
			wantErr: providers.ErrKeyringRef,
		},
		"nothing set": {plat: &nodes.Platform{}, wantErr: providers.ErrNoCredentials},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := (&ovh.Provider{}).Credentials(tc.plat, tc.getenv)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && len(got) != len(tc.want) {
				t.Errorf("got %d variables, want %v", len(got), tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestDestructive(t *testing.T) {
	d := (&ovh.Provider{}).Destructive()
	tests := map[string]struct {
		attr  string
		after map[string]any
		want  bool
	}{
		"a new os reinstalls":                           {"os", map[string]any{"os": "debian12_64"}, true},
		"an os removed from the configuration does not": {"os", map[string]any{"os": ""}, false},
		"customizations reinstall":                      {"customizations", nil, true},
		"a nested customization reinstalls":             {"customizations.hostname", nil, true},
		"storage reinstalls":                            {"storage", nil, true},
		"properties reinstall":                          {"properties", nil, true},
		"boot_id applies at next boot":                  {"boot_id", nil, false},
		"display_name is a plain update":                {"display_name", nil, false},
		"monitoring is a plain update":                  {"monitoring", nil, false},
		"no_intervention is a plain update":             {"no_intervention", nil, false},
		"service_name would be a new server":            {"service_name", nil, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := d(ovh.ResourceType, tc.attr, tc.after); got != tc.want {
				t.Errorf("destructive(%s, %v) = %v, want %v", tc.attr, tc.after, got, tc.want)
			}
		})
	}
	if d("ovh_vrack_dedicated_server_interface", "os", map[string]any{"os": "x"}) {
		t.Error("another resource type's os is destructive")
	}
}

func TestDeriveHostname(t *testing.T) {
	tests := map[string]struct{ id, want string }{
		"a .net service name gives its first label": {"ns5009999.ip-147-135-1.net", "ns5009999"},
		"a .eu service name gives its first label":  {"ns1234567.ip-1-2-3.eu", "ns1234567"},
		"an id that is no service name gives none":  {"1234567", ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := providers.DerivedHostname(&ovh.Provider{}, tc.id); got != tc.want {
				t.Errorf("DerivedHostname(%q) = %q, want %q", tc.id, got, tc.want)
			}
		})
	}
}

func TestValidatePlatformRegion(t *testing.T) {
	tests := map[string]struct {
		region string
		want   error
	}{
		"no region is the EU API":          {"", nil},
		"the endpoint name eu is accepted": {"eu", nil},
		"the order name canada is kept":    {"canada", nil},
		"us is accepted":                   {"us", nil},
		"an unknown region is refused":     {"bhs", providers.ErrInvalidSetting},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := (&ovh.Provider{}).ValidatePlatform(&nodes.Platform{Infrastructure: nodes.Infrastructure{Region: tc.region}})
			if !errors.Is(err, tc.want) {
				t.Errorf("ValidatePlatform(region %q) = %v, want %v", tc.region, err, tc.want)
			}
		})
	}
}

func TestOrderRegion(t *testing.T) {
	tests := map[string]struct{ region, endpoint, order string }{
		"eu orders in europe":     {"eu", "ovh-eu", "europe"},
		"europe orders in europe": {"europe", "ovh-eu", "europe"},
		"ca orders in canada":     {"ca", "ovh-ca", "canada"},
		"canada is the CA API":    {"canada", "ovh-ca", "canada"},
		"us sends no region":      {"us", "ovh-us", ""},
	}
	pools := map[string]nodes.Pool{"web": {Machine: "24rise01", Count: 1}}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			plat := &nodes.Platform{Name: "p", Infrastructure: nodes.Infrastructure{MetalProvider: "ovh", Region: tc.region,
				API: nodes.API{ClientID: "cid", ClientSecret: "csec"}}}
			env, err := (&ovh.Provider{}).Credentials(plat, nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := (&ovh.Provider{}).Configure(providers.Input{Platform: plat, Pools: pools})
			if err != nil {
				t.Fatal(err)
			}
			plan := cfg.Resources[0].Attrs["plan"].([]any)[0].(map[string]any)
			got := ""
			for _, c := range plan["configuration"].([]map[string]string) {
				if c["label"] == "region" {
					got = c["value"]
				}
			}
			if env["OVH_ENDPOINT"] != tc.endpoint || got != tc.order {
				t.Errorf("region %q: endpoint %q, order region %q; want %q, %q", tc.region, env["OVH_ENDPOINT"], got, tc.endpoint, tc.order)
			}
		})
	}
}
