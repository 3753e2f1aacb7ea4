package tofu

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Config is an OpenTofu root module, the builder providers fill in.
// [Config.Render] turns it into HCL with hclwrite, `tofu fmt` clean, in a
// fixed order: the terraform block, variables, providers, data sources,
// import blocks, resources, outputs; within a block, meta-arguments
// (count, for_each, provider, depends_on) first, the other attributes
// sorted by name, nested blocks in the given order, lifecycle last.
//
// Attribute values (the Attrs maps, [Output.Value]) may be nil (null), a
// string, bool, integer or float, a cty.Value, an [Expr], or a slice
// (tuple) or string-keyed map (object) of those.
type Config struct {
	// RequiredVersion, when set, constrains the tofu version
	// (required_version), like ">= 1.6.0".
	RequiredVersion string
	// RequiredProviders are the provider requirements, in order.
	RequiredProviders []RequiredProvider
	// Backend stores state; the zero value is the local backend.
	Backend Backend
	// Variables are declared input variables, typically the credentials
	// set through [Workdir.WriteVarsFile].
	Variables []Variable
	// Providers are provider configuration blocks.
	Providers []Provider
	// Data are data sources ("data" blocks).
	Data []Resource
	// Imports adopt existing infrastructure into resources.
	Imports []Import
	// Resources are managed resources.
	Resources []Resource
	// Outputs are root module outputs.
	Outputs []Output
}

// RequiredProvider is one entry of required_providers.
type RequiredProvider struct {
	// Name is the local name, like "hcloud".
	Name string
	// Source is the provider address, like "hetznercloud/hcloud".
	Source string
	// Version is a version constraint, like "~> 1.60"; empty means any.
	Version string
}

// Variable declares an input variable.
type Variable struct {
	// Name of the variable.
	Name string
	// Type is a type constraint expression, like "string"; empty means
	// any type.
	Type string
	// Sensitive hides the value in plan and apply output.
	Sensitive bool
	// Description is an optional human description.
	Description string
}

// Provider is a provider configuration block. It never holds credentials:
// [Config.Render] refuses a literal value for an attribute whose name says
// it is a secret (token, password, secret, access_key, api_key,
// private_key, conn_str, credentials); give those through the provider's
// environment variables, or as an [Expr] referring to a variable set by
// [Workdir.WriteVarsFile].
type Provider struct {
	// Name is the provider's local name, like "hcloud".
	Name string
	// Alias, when set, names an additional configuration.
	Alias string
	// Attrs are the provider's arguments.
	Attrs map[string]any
	// Blocks are nested blocks.
	Blocks []Block
}

// Import is an import block: adopt the existing object ID into To.
type Import struct {
	// To is the resource address, like `hcloud_server.web` or
	// `hcloud_server.web["a"]`.
	To string
	// ID is the provider's import id of the existing object.
	ID string
}

// Resource is a managed resource ("resource" block) or, in [Config.Data],
// a data source.
type Resource struct {
	// Type is the resource type, like "hcloud_server".
	Type string
	// Name is the resource name.
	Name string
	// Attrs are the arguments, meta-arguments included.
	Attrs map[string]any
	// Blocks are nested blocks, in order.
	Blocks []Block
	// Lifecycle, when set, adds a lifecycle block.
	Lifecycle *Lifecycle
}

// Address returns the resource address, type.name.
func (r Resource) Address() string { return r.Type + "." + r.Name }

// Block is a nested block.
type Block struct {
	// Type is the block type.
	Type string
	// Labels are the block labels, usually none.
	Labels []string
	// Attrs are the block's arguments.
	Attrs map[string]any
	// Blocks are nested blocks, in order.
	Blocks []Block
}

// Lifecycle is a resource's lifecycle block.
type Lifecycle struct {
	// IgnoreChanges lists attributes (references like `display_name` or
	// `labels["x"]`) whose drift is ignored.
	IgnoreChanges []string
	// IgnoreAllChanges renders ignore_changes = all, overriding
	// IgnoreChanges.
	IgnoreAllChanges bool
	// CreateBeforeDestroy sets create_before_destroy = true.
	CreateBeforeDestroy bool
	// PreventDestroy sets prevent_destroy = true.
	PreventDestroy bool
}

// Output is a root module output.
type Output struct {
	// Name of the output.
	Name string
	// Value is the output's value, usually an [Expr].
	Value any
	// Sensitive hides the value in plan and apply output.
	Sensitive bool
	// Description is an optional human description.
	Description string
}

// Render returns cfg as HCL, formatted as `tofu fmt` would.
//
// Errors: one matching [ErrInvalid] naming the first bad value: a name
// that is not an identifier, an expression or address that does not
// parse, a duplicate address, an unsupported value type, a literal
// credential in a provider or backend block, an unknown backend.
func (cfg *Config) Render() ([]byte, error) {
	f := hclwrite.NewEmptyFile()
	r := &renderer{body: f.Body(), seen: map[string]bool{}}
	for _, section := range []func(*Config) error{
		r.terraform, r.variables, r.providers, r.data, r.imports, r.resources, r.outputs,
	} {
		if err := section(cfg); err != nil {
			return nil, err
		}
	}

	// File.Bytes formats the tokens as tofu fmt does: no second pass.
	out := f.Bytes()
	// A safety net: formatting can join tokens of an odd expression
	// (`0.0. 0` becomes `0.0.0`) into something that no longer parses.
	if _, diags := hclsyntax.ParseConfig(out, configFile, hcl.InitialPos); diags.HasErrors() {
		return nil, invalidf("the generated configuration does not parse (check Expr values): %s", diags.Error())
	}
	return out, nil
}

// renderer writes a Config's top-level blocks into body, in the order
// [Config.Render] documents, one blank line between blocks, and refuses a
// name or address declared twice.
type renderer struct {
	body   *hclwrite.Body
	blocks int
	seen   map[string]bool
}

// block appends a top-level block, after a blank line unless it is the
// first, and returns its body.
func (r *renderer) block(typ string, labels []string) *hclwrite.Body {
	r.sep()
	return r.body.AppendNewBlock(typ, labels).Body()
}

// sep separates the next top-level block from the one before it.
func (r *renderer) sep() {
	if r.blocks > 0 {
		r.body.AppendNewline()
	}
	r.blocks++
}

// unique refuses a kind and name seen before.
func (r *renderer) unique(kind, name string) error {
	key := kind + " " + name
	if r.seen[key] {
		return invalidf("%s %q is declared twice: want unique names", kind, name)
	}
	r.seen[key] = true
	return nil
}

// terraform writes the terraform block, when cfg needs one.
func (r *renderer) terraform(cfg *Config) error {
	if cfg.RequiredVersion == "" && len(cfg.RequiredProviders) == 0 && !cfg.Backend.block() {
		return nil
	}
	r.sep()
	return renderTerraform(r.body, cfg)
}

func (r *renderer) variables(cfg *Config) error {
	for _, v := range cfg.Variables {
		where := "variable " + v.Name
		if err := checkName("variable", v.Name); err != nil {
			return err
		}
		if err := r.unique("variable", v.Name); err != nil {
			return err
		}
		b := r.block("variable", []string{v.Name})
		if v.Description != "" {
			if err := setAttr(b, where, "description", v.Description); err != nil {
				return err
			}
		}
		if v.Type != "" {
			if err := setAttr(b, where, "type", Expr(v.Type)); err != nil {
				return err
			}
		}
		if v.Sensitive {
			if err := setAttr(b, where, "sensitive", true); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *renderer) providers(cfg *Config) error {
	for _, p := range cfg.Providers {
		where := "provider " + p.Name
		if err := checkName("provider", p.Name); err != nil {
			return err
		}
		if p.Alias != "" {
			if err := checkName(where+": alias", p.Alias); err != nil {
				return err
			}
			where += "." + p.Alias
		}
		if err := r.unique("provider", where); err != nil {
			return err
		}
		if err := checkNoSecrets(where, p.Attrs, p.Blocks); err != nil {
			return err
		}
		b := r.block("provider", []string{p.Name})
		if p.Alias != "" {
			if err := setAttr(b, where, "alias", p.Alias); err != nil {
				return err
			}
		}
		if err := fillBody(b, where, p.Attrs, p.Blocks); err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) data(cfg *Config) error {
	for _, d := range cfg.Data {
		if err := r.unique("data", d.Address()); err != nil {
			return err
		}
		r.sep()
		if err := renderResource(r.body, "data", d); err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) imports(cfg *Config) error {
	for _, im := range cfg.Imports {
		where := fmt.Sprintf("import to %q", im.To)
		to, err := traversalTokens(where, im.To, 2)
		if err != nil {
			return err
		}
		if err := r.unique("import to", im.To); err != nil {
			return err
		}
		if im.ID == "" {
			return invalidf("%s: id is empty: want the provider's id of the existing object", where)
		}
		b := r.block("import", nil)
		b.SetAttributeRaw("to", to)
		if err := setAttr(b, where, "id", im.ID); err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) resources(cfg *Config) error {
	for _, res := range cfg.Resources {
		if err := r.unique("resource", res.Address()); err != nil {
			return err
		}
		r.sep()
		if err := renderResource(r.body, "resource", res); err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) outputs(cfg *Config) error {
	for _, o := range cfg.Outputs {
		where := "output " + o.Name
		if err := checkName("output", o.Name); err != nil {
			return err
		}
		if err := r.unique("output", o.Name); err != nil {
			return err
		}
		b := r.block("output", []string{o.Name})
		if o.Description != "" {
			if err := setAttr(b, where, "description", o.Description); err != nil {
				return err
			}
		}
		if err := setAttr(b, where, "value", o.Value); err != nil {
			return err
		}
		if o.Sensitive {
			if err := setAttr(b, where, "sensitive", true); err != nil {
				return err
			}
		}
	}
	return nil
}

func renderTerraform(body *hclwrite.Body, cfg *Config) error {
	tb := body.AppendNewBlock("terraform", nil).Body()
	if cfg.RequiredVersion != "" {
		if err := setAttr(tb, "terraform", "required_version", cfg.RequiredVersion); err != nil {
			return err
		}
	}
	if len(cfg.RequiredProviders) > 0 {
		blankLine(tb)
		rp := tb.AppendNewBlock("required_providers", nil).Body()
		seen := map[string]bool{}
		for _, p := range cfg.RequiredProviders {
			if err := checkName("required provider", p.Name); err != nil {
				return err
			}
			if seen[p.Name] {
				return invalidf("required provider %q is declared twice: want unique names", p.Name)
			}
			seen[p.Name] = true
			if p.Source == "" {
				return invalidf("required provider %q: source is empty: want an address like %q", p.Name, "hetznercloud/hcloud")
			}
			obj := map[string]any{"source": p.Source}
			if p.Version != "" {
				obj["version"] = p.Version
			}
			if err := setAttr(rp, "required provider", p.Name, obj); err != nil {
				return err
			}
		}
	}
	return cfg.Backend.render(tb)
}

var metaArgs = []string{"count", "for_each", "provider", "depends_on"}

func renderResource(body *hclwrite.Body, kind string, r Resource) error {
	where := kind + " " + r.Address()
	if err := checkName(kind+" type", r.Type); err != nil {
		return err
	}
	if err := checkName(kind+" "+r.Type+" name", r.Name); err != nil {
		return err
	}
	b := body.AppendNewBlock(kind, []string{r.Type, r.Name}).Body()
	if err := fillBody(b, where, r.Attrs, r.Blocks); err != nil {
		return err
	}
	if r.Lifecycle != nil {
		if kind != "resource" {
			return invalidf("%s: a lifecycle block is for managed resources only", where)
		}
		return renderLifecycle(b, where, *r.Lifecycle)
	}
	return nil
}

func renderLifecycle(body *hclwrite.Body, where string, lc Lifecycle) error {
	where += ": lifecycle"
	blankLine(body)
	b := body.AppendNewBlock("lifecycle", nil).Body()
	if lc.CreateBeforeDestroy {
		b.SetAttributeValue("create_before_destroy", ctyTrue)
	}
	if lc.PreventDestroy {
		b.SetAttributeValue("prevent_destroy", ctyTrue)
	}
	switch {
	case lc.IgnoreAllChanges:
		b.SetAttributeRaw("ignore_changes", hclwrite.TokensForIdentifier("all"))
	case len(lc.IgnoreChanges) > 0:
		var elems []hclwrite.Tokens
		for _, a := range lc.IgnoreChanges {
			t, err := traversalTokens(where+": ignore_changes", a, 1)
			if err != nil {
				return err
			}
			elems = append(elems, t)
		}
		b.SetAttributeRaw("ignore_changes", hclwrite.TokensForTuple(elems))
	}
	return nil
}

// fillBody writes attrs (meta-arguments first, then sorted) and blocks.
func fillBody(b *hclwrite.Body, where string, attrs map[string]any, blocks []Block) error {
	for _, k := range attrOrder(attrs) {
		if err := setAttr(b, where, k, attrs[k]); err != nil {
			return err
		}
	}
	for _, nb := range blocks {
		w := where + ": block " + nb.Type
		if err := checkName(where+": block type", nb.Type); err != nil {
			return err
		}
		for _, l := range nb.Labels {
			if l == "" {
				return invalidf("%s: empty label: want a non-empty string", w)
			}
		}
		blankLine(b)
		child := b.AppendNewBlock(nb.Type, nb.Labels).Body()
		if err := fillBody(child, w, nb.Attrs, nb.Blocks); err != nil {
			return err
		}
	}
	return nil
}

// blankLine separates a nested block from what comes before it in b.
func blankLine(b *hclwrite.Body) {
	if len(b.Attributes()) > 0 || len(b.Blocks()) > 0 {
		b.AppendNewline()
	}
}

func attrOrder(attrs map[string]any) []string {
	var meta, rest []string
	for k := range attrs {
		if slices.Contains(metaArgs, k) {
			meta = append(meta, k)
		} else {
			rest = append(rest, k)
		}
	}
	slices.SortFunc(meta, func(a, b string) int {
		return slices.Index(metaArgs, a) - slices.Index(metaArgs, b)
	})
	slices.Sort(rest)
	return append(meta, rest...)
}

func setAttr(b *hclwrite.Body, where, name string, v any) error {
	if err := checkName(where+": attribute", name); err != nil {
		return err
	}
	t, err := valueTokens(where+": attribute "+name, v)
	if err != nil {
		return err
	}
	b.SetAttributeRaw(name, t)
	return nil
}

func checkName(what, name string) error {
	if !isIdentifier(name) {
		return invalidf("%s %q: want an identifier (letters, digits, '_' and '-', not starting with a digit)", what, name)
	}
	return nil
}

// secretWords mark attribute names that hold credentials.
var secretWords = []string{"token", "password", "secret", "access_key", "api_key", "private_key", "conn_str", "credentials"}

func isSecretName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// checkNoSecrets refuses a literal (non-Expr) value for an attribute named
// like a credential, in attrs or nested blocks. A boolean is never a
// credential (skip_credentials_validation = true is a switch).
func checkNoSecrets(where string, attrs map[string]any, blocks []Block) error {
	for k, v := range attrs {
		if _, ok := v.(Expr); ok || v == nil || !isSecretName(k) {
			continue
		}
		if _, ok := v.(bool); ok {
			continue
		}
		return invalidf("%s: attribute %s looks like a credential: never write one into the configuration; pass it by environment variable or as a variable reference (Expr(\"var.x\")) set by the variables file", where, k)
	}
	for _, b := range blocks {
		if err := checkNoSecrets(where+": block "+b.Type, b.Attrs, b.Blocks); err != nil {
			return err
		}
	}
	return nil
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("render configuration: %w: "+format, append([]any{ErrInvalid}, args...)...)
}
