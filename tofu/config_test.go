package tofu

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/plasmactl/plasma-node/internal/tofutest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fullConfig uses every feature of the builder.
func fullConfig() *Config {
	return &Config{
		RequiredVersion: ">= 1.6.0",
		RequiredProviders: []RequiredProvider{
			{Name: "hcloud", Source: "hetznercloud/hcloud", Version: "~> 1.60"},
			{Name: "local", Source: "hashicorp/local"},
		},
		Backend: Backend{Type: BackendPG, SchemaName: "plasma_prod"},
		Variables: []Variable{
			{Name: "hcloud_token", Type: "string", Sensitive: true, Description: "Hetzner Cloud API token"},
		},
		Providers: []Provider{
			{Name: "hcloud", Attrs: map[string]any{
				"token":         Expr("var.hcloud_token"),
				"endpoint":      "http://127.0.0.1:8080/v1",
				"poll_interval": "50ms",
			}},
		},
		Data: []Resource{
			{Type: "hcloud_image", Name: "debian", Attrs: map[string]any{"name": "debian-12"}},
		},
		Imports: []Import{
			{To: `hcloud_server.prod_control_existing_0`, ID: "4711"},
			{To: `hcloud_server.pool["prod-web-001"]`, ID: "4712"},
		},
		Resources: []Resource{
			{
				Type: "hcloud_server", Name: "prod_control_existing_0",
				Attrs: map[string]any{
					"name":        "prod-control-001",
					"server_type": "cx22",
					"image":       "debian-12",
					"location":    "fsn1",
					"labels":      map[string]string{"platform": "prod", "pool": "control", "managed-by": "plasma-node"},
				},
				Lifecycle: &Lifecycle{IgnoreChanges: []string{"ssh_keys", "user_data", `labels["note"]`}},
			},
			{
				Type: "hcloud_server", Name: "pool",
				Attrs: map[string]any{
					"for_each":    Expr(`toset(["prod-web-001", "prod-web-002"])`),
					"name":        Expr("each.key"),
					"server_type": "cx32",
					"image":       Expr("data.hcloud_image.debian.name"),
					"ssh_keys":    []string{"ops"},
					"backups":     false,
					"user_data":   "#cloud-config\nhostname: ${each.key}\n",
					"count_hint":  3,
					"ratio":       0.5,
					"nothing":     nil,
				},
				Blocks: []Block{
					{Type: "public_net", Attrs: map[string]any{"ipv4_enabled": true, "ipv6_enabled": false}},
					{Type: "network", Attrs: map[string]any{"network_id": 42, "ip": "10.0.0.5"}},
				},
				Lifecycle: &Lifecycle{IgnoreAllChanges: true, PreventDestroy: true, CreateBeforeDestroy: true},
			},
		},
		Outputs: []Output{
			{Name: "servers", Description: "Servers by name", Value: Expr(`{ for k, s in hcloud_server.pool : k => { id = s.id, ipv4 = s.ipv4_address } }`)},
			{Name: "image", Value: Expr("data.hcloud_image.debian.id"), Sensitive: true},
		},
	}
}

func TestRenderGolden(t *testing.T) {
	tests := map[string]struct {
		cfg    *Config
		golden string
	}{
		"every feature renders in a fixed order": {cfg: fullConfig(), golden: "full.tf"},
		"an empty configuration renders nothing": {cfg: &Config{}, golden: "empty.tf"},
		"the OVH adoption block of the anchor renders": {cfg: &Config{
			RequiredProviders: []RequiredProvider{{Name: "ovh", Source: "ovh/ovh", Version: ">= 2.11.0"}},
			Imports:           []Import{{To: "ovh_dedicated_server.prod_control_existing_0", ID: "ns1234567.ip-192-0-2-1.net"}},
			Resources: []Resource{{
				Type: "ovh_dedicated_server", Name: "prod_control_existing_0",
				Attrs: map[string]any{
					"service_name":              "ns1234567.ip-192-0-2-1.net",
					"prevent_install_on_import": true,
				},
				Lifecycle: &Lifecycle{IgnoreAllChanges: true},
			}},
		}, golden: "ovh_adopt.tf"},
		"an s3 backend renders with its lock file": {cfg: &Config{
			Backend: Backend{Type: BackendS3, Bucket: "state", Key: "plasma/prod.tfstate", Region: "eu-west-1",
				Attrs: map[string]any{"endpoints": map[string]any{"s3": "https://s3.example.com"}, "skip_credentials_validation": true}},
		}, golden: "s3.tf"},
		"a local backend with a path renders a backend block": {cfg: &Config{
			Backend: Backend{Type: BackendLocal, Attrs: map[string]any{"path": "state/prod.tfstate"}},
		}, golden: "local_path.tf"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tc.cfg.Render()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, got)
		})
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func TestRenderDefaultLocalBackendHasNoBlock(t *testing.T) {
	for name, b := range map[string]Backend{
		"zero value":     {},
		"explicit local": {Type: BackendLocal},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := (&Config{Backend: b}).Render()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 0 {
				t.Errorf("Render = %q, want nothing", got)
			}
			if b.Persistent() {
				t.Error("Persistent() = true for the local backend")
			}
		})
	}
	for _, typ := range []string{BackendPG, BackendS3} {
		if !(Backend{Type: typ}).Persistent() {
			t.Errorf("Backend{Type: %q}.Persistent() = false", typ)
		}
	}
}

func TestRenderRefusesBadInput(t *testing.T) {
	res := func(attrs map[string]any) *Config {
		return &Config{Resources: []Resource{{Type: "local_file", Name: "a", Attrs: attrs}}}
	}
	tests := map[string]struct {
		cfg  *Config
		want string // in the message
	}{
		"a provider token given literally is refused": {
			cfg:  &Config{Providers: []Provider{{Name: "hcloud", Attrs: map[string]any{"token": "s3cr3t"}}}},
			want: "attribute token looks like a credential",
		},
		"a secret in a nested provider block is refused": {
			cfg: &Config{Providers: []Provider{{Name: "aws", Blocks: []Block{
				{Type: "assume_role", Attrs: map[string]any{"secret_key": "x"}},
			}}}},
			want: "secret_key looks like a credential",
		},
		"a literal pg connection string in backend attrs is refused": {
			cfg:  &Config{Backend: Backend{Type: BackendPG, Attrs: map[string]any{"conn_str": "postgres://u:p@h/db"}}},
			want: "conn_str looks like a credential",
		},
		"an unknown backend names the valid ones": {
			cfg:  &Config{Backend: Backend{Type: "consul"}},
			want: `backend type "consul": want "local" (the default), "pg" or "s3"`,
		},
		"an s3 backend without a bucket is refused": {
			cfg:  &Config{Backend: Backend{Type: BackendS3, Key: "k", Region: "r"}},
			want: "want all three set",
		},
		"a backend attribute overriding a field is refused": {
			cfg:  &Config{Backend: Backend{Type: BackendS3, Bucket: "b", Key: "k", Region: "r", Attrs: map[string]any{"bucket": "c"}}},
			want: "attribute bucket is set by a Backend field",
		},
		"an attribute name with a space is refused": {
			cfg:  res(map[string]any{"bad name": 1}),
			want: `attribute "bad name": want an identifier`,
		},
		"a resource name starting with a digit is refused": {
			cfg:  &Config{Resources: []Resource{{Type: "local_file", Name: "1a"}}},
			want: `name "1a": want an identifier`,
		},
		"an expression that does not parse is refused": {
			cfg:  res(map[string]any{"content": Expr("var.")}),
			want: `expression "var." does not parse`,
		},
		"an expression smuggling a second attribute is refused": {
			cfg:  res(map[string]any{"content": Expr("1\nfilename = \"/etc/passwd\"")}),
			want: "does not parse",
		},
		"an empty expression is refused": {
			cfg:  res(map[string]any{"content": Expr("")}),
			want: "empty expression",
		},
		"an unsupported value type is refused": {
			cfg:  res(map[string]any{"content": struct{}{}}),
			want: "value of type struct {}",
		},
		"a map with int keys is refused": {
			cfg:  res(map[string]any{"content": map[int]string{1: "a"}}),
			want: "value of type map[int]string",
		},
		"NaN is refused": {
			cfg:  res(map[string]any{"ratio": nanValue()}),
			want: "want a finite number",
		},
		"an unknown cty value is refused": {
			cfg:  res(map[string]any{"content": cty.UnknownVal(cty.String)}),
			want: "unknown cty value",
		},
		"invalid UTF-8 is refused without echoing it": {
			cfg:  res(map[string]any{"content": "\xff"}),
			want: "not valid UTF-8",
		},
		"an import to a bare name is refused": {
			cfg:  &Config{Imports: []Import{{To: "server", ID: "1"}}},
			want: `reference "server": want an address like "type.name"`,
		},
		"an import without an id is refused": {
			cfg:  &Config{Imports: []Import{{To: "hcloud_server.a"}}},
			want: "id is empty",
		},
		"a duplicate resource is refused": {
			cfg: &Config{Resources: []Resource{
				{Type: "local_file", Name: "a"}, {Type: "local_file", Name: "a"},
			}},
			want: `resource "local_file.a" is declared twice`,
		},
		"a duplicate required provider is refused": {
			cfg: &Config{RequiredProviders: []RequiredProvider{
				{Name: "local", Source: "hashicorp/local"}, {Name: "local", Source: "hashicorp/local"},
			}},
			want: `required provider "local" is declared twice`,
		},
		"a required provider without a source is refused": {
			cfg:  &Config{RequiredProviders: []RequiredProvider{{Name: "local"}}},
			want: "source is empty",
		},
		"a bad ignore_changes entry is refused": {
			cfg: &Config{Resources: []Resource{{Type: "local_file", Name: "a",
				Lifecycle: &Lifecycle{IgnoreChanges: []string{"not valid["}}}}},
			want: `reference "not valid["`,
		},
		"a lifecycle on a data source is refused": {
			cfg:  &Config{Data: []Resource{{Type: "local_file", Name: "a", Lifecycle: &Lifecycle{}}}},
			want: "lifecycle block is for managed resources only",
		},
		"an empty block label is refused": {
			cfg: &Config{Resources: []Resource{{Type: "local_file", Name: "a",
				Blocks: []Block{{Type: "x", Labels: []string{""}}}}}},
			want: "empty label",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tc.cfg.Render()
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Render = %q, %v; want an error matching ErrInvalid", got, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			for _, secret := range []string{"s3cr3t", "postgres://u:p@h/db", "\xff"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q quotes a value", err)
				}
			}
		})
	}
}

func nanValue() float64 {
	var zero float64
	return zero / zero
}

// TestRenderIsTofuFmtClean runs the real `tofu fmt -check` on generated
// files.
func TestRenderIsTofuFmtClean(t *testing.T) {
	bin := tofutest.Binary(t)
	dir := t.TempDir()
	configs := map[string]*Config{"full.tf": fullConfig()}
	for name, tc := range map[string]string{"ovh.tf": "ovh_adopt.tf", "s3.tf": "s3.tf", "local.tf": "local_path.tf"} {
		b, err := os.ReadFile(filepath.Join("testdata", tc))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, cfg := range configs {
		b, err := cfg.Render()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rc := filepath.Join(t.TempDir(), "empty.tfrc")
	if err := os.WriteFile(rc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "fmt", "-check", "-diff", "-recursive", dir)
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tofu fmt -check: %v\n%s", err, out)
	}
}

// FuzzRenderString renders an arbitrary string as an attribute value and
// an object key: the output must parse and give the strings back (in the
// NFC form cty keeps), so no value can break out of its quotes or start
// an interpolation.
func FuzzRenderString(f *testing.F) {
	for _, s := range []string{"", "plain", "${var.x}", "%{ if true }x%{ endif }", "\"quoted\"\n\\", "$${x}", "a\x00b", "\u00e9\u0301"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, value, key string) {
		cfg := &Config{Resources: []Resource{{Type: "t", Name: "n", Attrs: map[string]any{
			"v": value, "m": map[string]any{key: value},
		}}}}
		b, err := cfg.Render()
		if !utf8.ValidString(value) || !utf8.ValidString(key) {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Render of invalid UTF-8 = %v, want ErrInvalid", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		file, diags := hclsyntax.ParseConfig(b, "main.tf", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("rendered config does not parse: %s\n%s", diags, b)
		}
		blocks := file.Body.(*hclsyntax.Body).Blocks
		if len(blocks) != 1 || len(blocks[0].Body.Blocks) != 0 || len(blocks[0].Body.Attributes) != 2 {
			t.Fatalf("rendered config has the wrong shape:\n%s", b)
		}
		attrs := blocks[0].Body.Attributes
		v, diags := attrs["v"].Expr.Value(nil)
		if diags.HasErrors() {
			t.Fatalf("value does not evaluate: %s\n%s", diags, b)
		}
		want := cty.StringVal(value)
		if !v.RawEquals(want) {
			t.Fatalf("value = %#v, want %#v\n%s", v, want, b)
		}
		m, diags := attrs["m"].Expr.Value(nil)
		if diags.HasErrors() {
			t.Fatalf("object does not evaluate: %s\n%s", diags, b)
		}
		wantKey := cty.StringVal(key).AsString()
		if m.LengthInt() != 1 || !m.Type().HasAttribute(wantKey) || !m.GetAttr(wantKey).RawEquals(want) {
			t.Fatalf("object = %#v, want {%q = %#v}\n%s", m, wantKey, want, b)
		}
	})
}

// FuzzRenderExpr renders an arbitrary expression: either Render refuses
// it with ErrInvalid, or the output parses with exactly the one attribute
// in the one block, so an expression cannot add attributes or blocks.
func FuzzRenderExpr(f *testing.F) {
	for _, s := range []string{"var.x", "1\ny = 2", "{ a = 1 }", "[for s in x : s.id]", "x # comment", "<<EOT\nhi\nEOT", "1 }\nresource \"a\" \"b\" {", "\"${x}\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		cfg := &Config{Resources: []Resource{{Type: "t", Name: "n", Attrs: map[string]any{"v": Expr(expr)}}}}
		b, err := cfg.Render()
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Render error %v does not match ErrInvalid", err)
			}
			return
		}
		file, diags := hclsyntax.ParseConfig(b, "main.tf", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("rendered config does not parse: %s\n%s", diags, b)
		}
		blocks := file.Body.(*hclsyntax.Body).Blocks
		if len(blocks) != 1 || len(blocks[0].Body.Blocks) != 0 || len(blocks[0].Body.Attributes) != 1 || blocks[0].Body.Attributes["v"] == nil {
			t.Fatalf("rendered config has the wrong shape:\n%s", b)
		}
	})
}
