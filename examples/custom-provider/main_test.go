package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/tofutest"
)

// TestProviderIsSmall keeps the example's promise: a provider for a new
// cloud in under 150 lines.
func TestProviderIsSmall(t *testing.T) {
	f, err := os.Open("provider.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for s := bufio.NewScanner(f); s.Scan(); {
		n++
	}
	if n == 0 || n >= 150 {
		t.Errorf("provider.go has %d lines, want under 150", n)
	}
}

// TestCustomProviderRuns runs the example with real tofu and the local
// plugin from the .ci/tools.sh mirror, offline.
func TestCustomProviderRuns(t *testing.T) {
	bin := tofutest.Binary(t)
	rc := tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Local))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, t.TempDir(), bin, map[string]string{"TF_CLI_CONFIG_FILE": rc}, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"providers known: [aws filecloud hetzner manual ovh pxe scaleway]",
		`resource "local_file" "demo_web_001"`,
		"Plan: 0 to import, 2 to create, 0 to update (0 destructive), 0 to replace, 0 to delete\n  create               local_file.demo_web_001",
		"node demo-web-002@demo: server ",
		"private IP 192.168.0.2",
		`demo-web-001.json: {"hostname":"demo-web-001","machine":"small","pool":"web"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
