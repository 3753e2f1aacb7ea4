package tofutest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModuleRootFindsThisModule(t *testing.T) {
	root := ModuleRoot()
	if root == "" {
		t.Fatal("ModuleRoot() = \"\" inside the module")
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "tofutest", "tofutest.go")); err != nil {
		t.Errorf("ModuleRoot() = %q, which does not hold this package: %v", root, err)
	}
}

func TestCLIConfigInstallsFromTheMirrorOnly(t *testing.T) {
	rc := CLIConfig(t, `/odd "path"/${x}`)
	b, err := os.ReadFile(rc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`path    = "/odd \"path\"/$${x}"`,
		`filesystem_mirror {`,
		`include = ["registry.opentofu.org/*/*", "registry.terraform.io/*/*"]`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("tofurc lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "direct") {
		t.Errorf("tofurc allows direct installation:\n%s", b)
	}
}

func TestBinaryHonoursTheEnvironment(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tofu")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvBinary, p)
	if got := Binary(t); got != p {
		t.Errorf("Binary() = %q, want %q", got, p)
	}
}
