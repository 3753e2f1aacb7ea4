// Package providertest holds test helpers for the provider subpackages:
// golden files of rendered configurations and a check of resource
// arguments against a provider's documented schema.
//
// It is for tests only and runs no tofu.
package providertest

import (
	"github.com/plasmactl/plasma-node/providers"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Golden compares got with the file path, rewriting it when update is set.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}

// Schema is the documented arguments of one resource type.
type Schema struct {
	// Required arguments must be set.
	Required []string
	// Optional arguments may be set; anything else is an error.
	Optional []string
}

var metaArgs = []string{"count", "for_each", "provider", "depends_on"}

// CheckSchema parses src and checks every resource block of each type in
// schemas: its required arguments are set, unless the block adopts a
// server (import), and it sets no argument the schema does not list. It
// returns the number of blocks checked.
func CheckSchema(t testing.TB, src []byte, schemas map[string]Schema) int {
	t.Helper()
	f, diags := hclsyntax.ParseConfig(src, "main.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("parse: %s", diags.Error())
	}
	imported := map[string]bool{}
	body := f.Body.(*hclsyntax.Body)
	for _, b := range body.Blocks {
		if b.Type == "import" {
			if to, ok := b.Body.Attributes["to"]; ok {
				imported[string(to.Expr.Range().SliceBytes(src))] = true
			}
		}
	}
	n := 0
	for _, b := range body.Blocks {
		if b.Type != "resource" || len(b.Labels) != 2 {
			continue
		}
		s, ok := schemas[b.Labels[0]]
		if !ok {
			t.Errorf("resource %s.%s: type not in the documented schemas", b.Labels[0], b.Labels[1])
			continue
		}
		n++
		addr := b.Labels[0] + "." + b.Labels[1]
		for name := range b.Body.Attributes {
			if !slices.Contains(s.Required, name) && !slices.Contains(s.Optional, name) && !slices.Contains(metaArgs, name) {
				t.Errorf("resource %s: argument %s is not documented", addr, name)
			}
		}
		if imported[addr] {
			continue
		}
		for _, name := range s.Required {
			if _, ok := b.Body.Attributes[name]; !ok {
				t.Errorf("resource %s: required argument %s is missing", addr, name)
			}
		}
	}
	return n
}

// CheckConfigure renders p's configuration for in, compares it with the
// golden file at path (rewritten when update is set) and checks its
// resources against schemas, failing unless exactly want resources were
// checked.
func CheckConfigure(t testing.TB, p providers.Provider, in providers.Input, path string, schemas map[string]Schema, want int, update bool) {
	t.Helper()
	cfg, err := p.Configure(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cfg.Render()
	if err != nil {
		t.Fatal(err)
	}
	Golden(t, path, b, update)
	if n := CheckSchema(t, b, schemas); n != want {
		t.Errorf("checked %d resources, want %d", n, want)
	}
}
