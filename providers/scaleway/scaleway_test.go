package scaleway_test

import (
	"errors"
	"flag"
	"path/filepath"
	"testing"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/internal/providertest"
	"github.com/plasmactl/plasma-node/providers/scaleway"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Arguments of scaleway_baremetal_server, from
// https://registry.terraform.io/providers/scaleway/scaleway/latest/docs/resources/baremetal_server
var schema = map[string]providertest.Schema{scaleway.ResourceType: {
	Required: []string{"offer"},
	Optional: []string{"name", "hostname", "description", "tags", "zone", "os", "ssh_key_ids", "user", "password",
		"service_user", "service_password", "reinstall_on_config_changes", "install_config_afterward",
		"project_id", "options", "private_network", "private_ip", "partitioning", "protected"},
}}

func TestConfigureMatchesGoldenAndSchema(t *testing.T) {
	plat := &nodes.Platform{Name: "lab", Infrastructure: nodes.Infrastructure{MetalProvider: "scaleway", Zone: "fr-par-2", Image: "d17d6872-0412-45d9-a198-af82c34d3c5c", SSHKeyID: "key-1"}}
	pools := map[string]nodes.Pool{"worker": {Machine: "EM-A115X-SSD", Count: 2}}
	tests := map[string]struct {
		in   providers.Input
		file string
	}{
		"fresh servers": {providers.Input{Platform: plat, Pools: pools}, "fresh.tf"},
		"an existing server is adopted in its zone": {providers.Input{Platform: plat, Pools: pools,
			Existing: []providers.Existing{{Pool: "worker", Index: 1, ServerID: "nl-ams-1/11111111-2222-3333-4444-555555555555"}}}, "adopt.tf"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			providertest.CheckConfigure(t, &scaleway.Provider{}, tc.in, filepath.Join("testdata", tc.file), schema, 2, *update)
		})
	}
}

func TestConfigureRefusesADediboxAdoption(t *testing.T) {
	_, err := (&scaleway.Provider{}).Configure(providers.Input{Platform: &nodes.Platform{Name: "lab"},
		Pools:    map[string]nodes.Pool{"w": {Machine: "x", Count: 1}},
		Existing: []providers.Existing{{Pool: "w", ServerID: "sd-42"}}})
	if !errors.Is(err, providers.ErrInvalidInput) {
		t.Errorf("err = %v, want ErrInvalidInput", err)
	}
}

func TestValidateServerID(t *testing.T) {
	tests := map[string]struct {
		id string
		ok bool
	}{
		"a dedibox id is valid":       {"sd-12345", true},
		"a zoned uuid is valid":       {"fr-par-2/11111111-2222-3333-4444-555555555555", true},
		"a bare uuid is refused":      {"11111111-2222-3333-4444-555555555555", false},
		"an upper-case id is refused": {"SD-1", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := (&scaleway.Provider{}).ValidateServerID(tc.id)
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, providers.ErrInvalidServerID)) {
				t.Errorf("ValidateServerID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
			}
		})
	}
}

func TestCredentialsNameTheVariablesToSet(t *testing.T) {
	_, err := (&scaleway.Provider{}).Credentials(&nodes.Platform{}, nil)
	if !errors.Is(err, providers.ErrNoCredentials) {
		t.Fatalf("err = %v, want ErrNoCredentials", err)
	}
	got, err := (&scaleway.Provider{}).Credentials(&nodes.Platform{Infrastructure: nodes.Infrastructure{ProjectID: "p", API: nodes.API{AccessKey: "ak", SecretKey: "sk"}}}, nil)
	if err != nil || got["SCW_ACCESS_KEY"] != "ak" || got["SCW_SECRET_KEY"] != "sk" || got["SCW_DEFAULT_PROJECT_ID"] != "p" {
		t.Errorf("Credentials = %v, %v", got, err)
	}
}
