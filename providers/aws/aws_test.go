package aws_test

import (
	"errors"
	"flag"
	"path/filepath"
	"testing"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/aws"
	"github.com/plasmactl/plasma-node/providers/internal/providertest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Arguments of aws_instance used here, from
// https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources/instance
// (ami is required unless a launch template gives it; instance_type too).
var schema = map[string]providertest.Schema{aws.ResourceType: {
	Required: []string{"ami", "instance_type"},
	Optional: []string{"availability_zone", "key_name", "tags", "subnet_id", "vpc_security_group_ids",
		"user_data", "user_data_base64", "user_data_replace_on_change", "associate_public_ip_address",
		"private_ip", "iam_instance_profile", "ebs_optimized", "monitoring"},
}}

func TestConfigureMatchesGoldenAndSchema(t *testing.T) {
	plat := &nodes.Platform{Name: "edge", Infrastructure: nodes.Infrastructure{MetalProvider: "aws", Region: "eu-west-3", Zone: "eu-west-3a", Image: "ami-0123456789abcdef0", SSHKeyID: "ops"}}
	pools := map[string]nodes.Pool{"ingress": {Machine: "t3.medium", Count: 2}}
	tests := map[string]struct {
		in   providers.Input
		file string
	}{
		"fresh instances": {providers.Input{Platform: plat, Pools: pools}, "fresh.tf"},
		"an existing instance is adopted": {providers.Input{Platform: plat, Pools: pools,
			Existing: []providers.Existing{{Pool: "ingress", Index: 0, Hostname: "gateway", ServerID: "i-0123456789abcdef0"}}}, "adopt.tf"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			providertest.CheckConfigure(t, &aws.Provider{}, tc.in, filepath.Join("testdata", tc.file), schema, 2, *update)
		})
	}
}

func TestValidateServerID(t *testing.T) {
	tests := map[string]struct {
		id string
		ok bool
	}{
		"a 17-digit id is valid":    {"i-0123456789abcdef0", true},
		"an 8-digit id is valid":    {"i-0123abcd", true},
		"an ami id is refused":      {"ami-0123456789abcdef0", false},
		"upper-case hex is refused": {"i-0123ABCD", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := (&aws.Provider{}).ValidateServerID(tc.id)
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, providers.ErrInvalidServerID)) {
				t.Errorf("ValidateServerID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
			}
		})
	}
}

func TestCredentialsAcceptAProfile(t *testing.T) {
	got, err := (&aws.Provider{}).Credentials(&nodes.Platform{Infrastructure: nodes.Infrastructure{Region: "eu-west-3"}},
		func(k string) string { return map[string]string{"AWS_PROFILE": "ops"}[k] })
	if err != nil || got["AWS_PROFILE"] != "ops" || got["AWS_REGION"] != "eu-west-3" {
		t.Errorf("Credentials = %v, %v", got, err)
	}
	if _, err := (&aws.Provider{}).Credentials(&nodes.Platform{}, nil); !errors.Is(err, providers.ErrNoCredentials) {
		t.Errorf("err = %v, want ErrNoCredentials", err)
	}
}
