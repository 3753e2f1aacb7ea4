package plasmanode

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

func TestStateBackend(t *testing.T) {
	const conn = "postgres://plasma:s3cret@127.0.0.1:5432/state"
	env := map[string]string{tofu.PGConnEnv: conn, "AWS_ACCESS_KEY_ID": "AKIAX", "AWS_SECRET_ACCESS_KEY": "hush", "HCLOUD_TOKEN": "t"}
	getenv := func(k string) string { return env[k] }
	none := func(string) string { return "" }
	tests := map[string]struct {
		st       nodes.State
		getenv   func(string) string
		want     tofu.Backend
		wantEnv  map[string]string
		wantErr  error
		wantText string
	}{
		"no state is the local backend":  {want: tofu.Backend{}, wantEnv: map[string]string{}},
		"local is the local backend":     {st: nodes.State{Backend: "local"}, want: tofu.Backend{}, wantEnv: map[string]string{}},
		"local with settings is refused": {st: nodes.State{Backend: "local", Bucket: "b"}, wantErr: ErrInvalidState, wantText: "local takes no settings"},
		"pg gets a schema per platform and its connection string from the environment": {st: nodes.State{Backend: "pg"},
			want: tofu.Backend{Type: "pg", SchemaName: "plasma_node_my_plat"}, wantEnv: map[string]string{tofu.PGConnEnv: conn}},
		"pg keeps a schema given": {st: nodes.State{Backend: "pg", SchemaName: "team"},
			want: tofu.Backend{Type: "pg", SchemaName: "team"}, wantEnv: map[string]string{tofu.PGConnEnv: conn}},
		"pg without PG_CONN_STR names it":    {st: nodes.State{Backend: "pg"}, getenv: none, wantErr: providers.ErrNoCredentials, wantText: "PG_CONN_STR"},
		"pg with conn_str in the file":       {st: nodes.State{Backend: "pg", ConnStr: conn}, wantErr: ErrInvalidState, wantText: "infrastructure.state.conn_str"},
		"pg with an s3 setting":              {st: nodes.State{Backend: "pg", Bucket: "b"}, wantErr: ErrInvalidState, wantText: "s3 settings"},
		"s3 with access_key in the file":     {st: nodes.State{Backend: "s3", Bucket: "b", Region: "r", AccessKey: "AKIAX"}, wantErr: ErrInvalidState, wantText: "AWS_ACCESS_KEY_ID"},
		"s3 with secret_key in the file":     {st: nodes.State{Backend: "s3", Bucket: "b", Region: "r", SecretKey: "hush"}, wantErr: ErrInvalidState, wantText: "AWS_SECRET_ACCESS_KEY"},
		"s3 without a bucket names bucket":   {st: nodes.State{Backend: "s3", Region: "eu-west-1"}, wantErr: ErrInvalidState, wantText: "bucket"},
		"s3 with a pg setting":               {st: nodes.State{Backend: "s3", Bucket: "b", Region: "r", SchemaName: "x"}, wantErr: ErrInvalidState, wantText: "schema_name"},
		"an unknown backend names the valid": {st: nodes.State{Backend: "consul"}, wantErr: ErrInvalidState, wantText: `"consul"`},
		"s3 gets a key per platform and the AWS variables set": {st: nodes.State{Backend: "s3", Bucket: "tfstate", Region: "eu-west-1"},
			want:    tofu.Backend{Type: "s3", Bucket: "tfstate", Key: "plasma-node/my-plat/terraform.tfstate", Region: "eu-west-1"},
			wantEnv: map[string]string{"AWS_ACCESS_KEY_ID": "AKIAX", "AWS_SECRET_ACCESS_KEY": "hush"}},
		"s3 with an endpoint is rendered to work offline": {st: nodes.State{Backend: "s3", Bucket: "tfstate", Key: "k", Region: "garage", Endpoint: "http://127.0.0.1:9000"},
			getenv: none,
			want: tofu.Backend{Type: "s3", Bucket: "tfstate", Key: "k", Region: "garage", Attrs: map[string]any{
				"endpoints": map[string]any{"s3": "http://127.0.0.1:9000"}, "use_path_style": true,
				"skip_credentials_validation": true, "skip_requesting_account_id": true, "skip_metadata_api_check": true, "skip_region_validation": true}},
			wantEnv: map[string]string{}},
		"s3 with an endpoint that is no URL":     {st: nodes.State{Backend: "s3", Bucket: "b", Region: "r", Endpoint: "127.0.0.1:9000"}, wantErr: ErrInvalidState, wantText: `endpoint "127.0.0.1:9000"`},
		"s3 with an endpoint of another scheme":  {st: nodes.State{Backend: "s3", Bucket: "b", Region: "r", Endpoint: "ftp://h"}, wantErr: ErrInvalidState, wantText: "http:// or https://"},
		"s3 with a password in the endpoint URL": {st: nodes.State{Backend: "s3", Bucket: "b", Region: "r", Endpoint: "https://u:hush@h"}, wantErr: ErrInvalidState, wantText: "no user info"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := tc.getenv
			if g == nil {
				g = getenv
			}
			plat := &nodes.Platform{Name: "my-plat", Infrastructure: nodes.Infrastructure{MetalProvider: "hetzner", State: tc.st}}
			got, gotEnv, err := stateBackend(plat, g)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("stateBackend() error = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.wantText) {
					t.Errorf("error %q does not contain %q", err, tc.wantText)
				}
				for _, secret := range []string{"s3cret", "hush"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error %q shows a secret", err)
					}
				}
				if IsUsageError(err) != errors.Is(err, ErrInvalidState) {
					t.Errorf("IsUsageError(%v) = %v", err, IsUsageError(err))
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("backend (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEnv, gotEnv); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
			// The rendered configuration never holds a credential.
			b, err := (&tofu.Config{Backend: got}).Render()
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{"s3cret", "hush", "AKIAX", "conn_str"} {
				if strings.Contains(string(b), secret) {
					t.Errorf("configuration holds %q:\n%s", secret, b)
				}
			}
		})
	}
}

// TestStateBackendRefusesAMisspelledSetting: a key of the state block that
// is no setting (schema instead of schema_name) is refused with its line,
// rather than the state silently going to the default place.
func TestStateBackendRefusesAMisspelledSetting(t *testing.T) {
	const file = "infrastructure:\n  metal_provider: hetzner\n  state:\n    backend: pg\n    schema: team\n"
	var plat nodes.Platform
	if err := yaml.Unmarshal([]byte(file), &plat); err != nil {
		t.Fatal(err)
	}
	plat.Name = "p"
	if diff := cmp.Diff([]string{"schema (line 5)"}, plat.Infrastructure.State.Unknown); diff != "" {
		t.Errorf("Unknown (-want +got):\n%s", diff)
	}
	_, _, err := stateBackend(&plat, func(string) string { return "postgres://x" })
	if !errors.Is(err, ErrInvalidState) || !strings.Contains(err.Error(), "unknown setting schema (line 5)") || !strings.Contains(err.Error(), "schema_name") {
		t.Errorf("stateBackend = %v; want ErrInvalidState naming schema (line 5) and the valid keys", err)
	}
}

var update = flag.Bool("update", false, "rewrite golden files")

// TestStateBackendS3EndpointGolden: a platform naming only bucket, region
// and a custom endpoint renders the whole backend block tofu needs
// against an S3-compatible server with no way to AWS (golden
// testdata/s3_endpoint.tf), and no credential.
func TestStateBackendS3EndpointGolden(t *testing.T) {
	plat := &nodes.Platform{Name: "lab", Infrastructure: nodes.Infrastructure{MetalProvider: "hetzner",
		State: nodes.State{Backend: "s3", Bucket: "tfstate", Region: "us-east-1", Endpoint: "http://127.0.0.1:8333"}}}
	env := map[string]string{"AWS_ACCESS_KEY_ID": "AKIAGOLDEN", "AWS_SECRET_ACCESS_KEY": "golden-secret"}
	b, gotEnv, err := stateBackend(plat, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(env, gotEnv); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
	got, err := (&tofu.Config{Backend: b}).Render()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "s3_endpoint.tf")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("rendered backend (-want +got):\n%s", diff)
	}
	for _, secret := range []string{"AKIAGOLDEN", "golden-secret"} {
		if strings.Contains(string(got), secret) {
			t.Errorf("rendered backend holds %q", secret)
		}
	}
}
