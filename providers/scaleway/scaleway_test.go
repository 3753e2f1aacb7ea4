package scaleway_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/internal/providertest"
	"github.com/plasmactl/plasma-node/providers/scaleway"
	"github.com/plasmactl/plasma-node/tofu"
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
	plat := &nodes.Platform{Name: "lab", Infrastructure: nodes.Infrastructure{MetalProvider: "scaleway", Zone: "fr-par-2", Image: "d17d6872-0412-45d9-a198-af82c34d3c5c", SSHKeyID: "4f1c2a4e-6f6d-4d8f-9e0b-2b1a3c4d5e6f"}}
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

func TestDeriveHostname(t *testing.T) {
	tests := map[string]struct{ id, want string }{
		"a dedibox id is a hostname":                   {"sd-12345", "sd-12345"},
		"an Elastic Metal id gives zone and uuid head": {"fr-par-2/11111111-2222-3333-4444-555555555555", "fr-par-2-11111111"},
		"anything else gives none":                     {"not an id", ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := providers.DerivedHostname(&scaleway.Provider{}, tc.id); got != tc.want {
				t.Errorf("DerivedHostname(%q) = %q, want %q", tc.id, got, tc.want)
			}
		})
	}
}

func TestValidatePlatformRefusesIDsWithFieldAndLine(t *testing.T) {
	const uuid = "11111111-2222-3333-4444-555555555555"
	tests := map[string]struct {
		image, key string
		want       *providers.SettingError
	}{
		"a UUID os and key are valid":         {image: uuid, key: uuid},
		"a zoned os is valid":                 {image: "fr-par-2/" + uuid, key: uuid},
		"nothing set is valid":                {},
		"an os name is refused at its line":   {image: "ubuntu_jammy", key: uuid, want: &providers.SettingError{Field: "infrastructure.image", Line: 6, Value: "ubuntu_jammy"}},
		"a key name is refused at its line":   {image: uuid, key: "key-1", want: &providers.SettingError{Field: "infrastructure.ssh_key_id", Line: 7, Value: "key-1"}},
		"a zoned key is refused (plain UUID)": {key: "fr-par-2/" + uuid, want: &providers.SettingError{Field: "infrastructure.ssh_key_id", Line: 7, Value: "fr-par-2/" + uuid}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			yaml := "name: lab\n# the cloud\ninfrastructure:\n  metal_provider: scaleway\n  zone: fr-par-2\n" +
				"  image: \"" + tc.image + "\"\n  ssh_key_id: \"" + tc.key + "\"\n"
			if err := os.MkdirAll(filepath.Join(dir, "platforms", "lab"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "platforms", "lab", "platform.yaml"), []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			plat, err := nodes.Open(dir, nodes.Options{}).Platform(context.Background(), "lab")
			if err != nil {
				t.Fatal(err)
			}
			err = (&scaleway.Provider{}).ValidatePlatform(plat)
			var got *providers.SettingError
			if errors.As(err, &got) {
				if !errors.Is(err, providers.ErrInvalidSetting) || !errors.Is(err, nodes.ErrMalformed) {
					t.Errorf("err = %v, want ErrInvalidSetting and nodes.ErrMalformed", err)
				}
				got = &providers.SettingError{Field: got.Field, Line: got.Line, Value: got.Value}
			} else if err != nil {
				t.Fatalf("err = %v, want a *SettingError or nil", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidatePlatform() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDestructive(t *testing.T) {
	d := (&scaleway.Provider{}).Destructive()
	on := map[string]any{"reinstall_on_config_changes": true}
	off := map[string]any{"reinstall_on_config_changes": false}
	tests := map[string]struct {
		attr  string
		after map[string]any
		want  bool
	}{
		"os always reinstalls":                                {"os", off, true},
		"ssh keys reinstall with reinstall_on_config_changes": {"ssh_key_ids", on, true},
		"ssh keys alone only warn":                            {"ssh_key_ids", off, false},
		"a nested ssh key likewise":                           {"ssh_key_ids.0", on, true},
		"user reinstalls with the setting":                    {"user", on, true},
		"user alone only warns":                               {"user", off, false},
		"password reinstalls with the setting":                {"password", on, true},
		"password alone only warns":                           {"password", nil, false},
		"a write-only password version with the setting":      {"password_wo_version", on, true},
		"service_password reinstalls with the setting":        {"service_password", on, true},
		"service_password alone only warns":                   {"service_password", off, false},
		"turning the setting on reinstalls":                   {"reinstall_on_config_changes", on, true},
		"turning the setting off does not":                    {"reinstall_on_config_changes", off, false},
		"zone would be a new server":                          {"zone", off, true},
		"project_id would be a new server":                    {"project_id", off, true},
		"hostname is no reinstall":                            {"hostname", on, false},
		"name is a plain update":                              {"name", on, false},
		"tags are a plain update":                             {"tags", on, false},
		"offer is a move to the monthly offer":                {"offer", on, false},
		"partitioning is not watched by the plugin":           {"partitioning", on, false},
		"install_config_afterward reinstalls nothing":         {"install_config_afterward", on, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := d(scaleway.ResourceType, tc.attr, tc.after); got != tc.want {
				t.Errorf("destructive(%s, %v) = %v, want %v", tc.attr, tc.after, got, tc.want)
			}
		})
	}
}

func TestClassifyThroughTheGuard(t *testing.T) {
	const addr = scaleway.ResourceType + ".lab_worker_001"
	server := func(kv ...any) map[string]any {
		m := map[string]any{"os": "o1", "ssh_key_ids": []any{"k1"}, "reinstall_on_config_changes": false, "zone": "fr-par-2", "name": "a"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	change := func(actions tfjson.Actions, before, after map[string]any) *tfjson.Plan {
		return &tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{{Address: addr, Mode: tfjson.ManagedResourceMode,
			Type: scaleway.ResourceType, Change: &tfjson.Change{Actions: actions, Before: before, After: after}}}}
	}
	upd := tfjson.Actions{tfjson.ActionUpdate}
	tests := map[string]struct {
		plan *tfjson.Plan
		want tofu.Summary
	}{
		"a new key without the setting is a plain update": {change(upd, server(), server("ssh_key_ids", []any{"k2"})),
			tofu.Summary{Updates: []tofu.Change{{Address: addr, Type: scaleway.ResourceType, ChangedAttrs: []string{"ssh_key_ids"}}}}},
		"a new key with the setting reinstalls": {change(upd, server("reinstall_on_config_changes", true), server("ssh_key_ids", []any{"k2"}, "reinstall_on_config_changes", true)),
			tofu.Summary{DestructiveUpdates: []tofu.Change{{Address: addr, Type: scaleway.ResourceType,
				ChangedAttrs: []string{"ssh_key_ids"}, DestructiveAttrs: []string{"ssh_key_ids"}}}}},
		"a new zone is planned as a replacement": {change(tfjson.Actions{tfjson.ActionDelete, tfjson.ActionCreate}, server(), server("zone", "nl-ams-1")),
			tofu.Summary{Replacements: []tofu.Change{{Address: addr, Type: scaleway.ResourceType, ChangedAttrs: []string{"zone"}}}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tofu.Classify(tc.plan, (&scaleway.Provider{}).Destructive())); diff != "" {
				t.Errorf("Classify() (-want +got):\n%s", diff)
			}
		})
	}
}
