package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/internal/cli"
)

// TestMain lets the test binary act as plasma-node, so tests can run it as
// separate processes.
func TestMain(m *testing.M) {
	if os.Getenv("PLASMA_NODE_AS_MAIN") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

type result struct {
	code        int
	stdout, err string
}

func plasma(t *testing.T, dir string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"--dir", dir}, args...), &out, &errb)
	return result{code, out.String(), errb.String()}
}

func mustRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	r := plasma(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("plasma-node %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.err)
	}
	return r.stdout
}

// snapshot returns every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != ".lock" {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

func setup(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mustRun(t, dir, "add", "demo", "--provider", "manual", "--domain", "example.com")
	mustRun(t, dir, "add", "demo", "--hostname", "node001", "--public-ip", "51.159.0.1", "-z", "foundation.cluster.control")
	mustRun(t, dir, "add", "demo", "--hostname", "node002", "-z", "platform.cognition.data")
	return dir
}

func TestScaffoldAndRegister(t *testing.T) {
	dir := setup(t)
	got := snapshot(t, dir)
	want := map[string]string{
		"platforms/demo/platform.yaml": "name: demo\ninfrastructure:\n  metal_provider: manual\ndns:\n  domain: example.com\nnetworking:\n  private_network: 192.168.0.0/16\n",
		"platforms/demo/nodes/node001.yaml": "hostname: node001\nzones:\n  - platform.foundation.cluster.control\nnetwork:\n  public_ip: 51.159.0.1\n  private_ip: 192.168.0.1\n" +
			"k8s_labels:\n  platform.foundation.cluster.control: \"true\"\n",
		"platforms/demo/nodes/node002.yaml": "hostname: node002\nzones:\n  - platform.cognition.data\nnetwork:\n  public_ip: \"\"\n  private_ip: 192.168.0.2\n" +
			"k8s_labels:\n  platform.cognition.data: \"true\"\n",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	// Scaffolding again with agreeing flags is fine; disagreeing is not.
	mustRun(t, dir, "node:add", "demo", "--domain", "example.com")
	r := plasma(t, dir, "add", "demo", "--provider", "ovh")
	if r.code != 2 || !strings.Contains(r.err, `--provider "ovh": platform demo exists with provider "manual"`) {
		t.Errorf("conflicting scaffold: exit %d, %q", r.code, r.err)
	}
}

func TestBadInputExitsTwoAndWritesNothing(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"bad zone":                       {[]string{"add", "demo", "--hostname", "n3", "-z", "Foundation.x"}, `zone "Foundation.x"`},
		"bad op":                         {[]string{"allocate", "node001", "platform.a/"}, `platform.a/`},
		"removing a zone the node lacks": {[]string{"allocate", "node001", "platform.cognition.data-"}, "platform.cognition.data"},
		"duplicate private IP":           {[]string{"add", "demo", "--hostname", "n3", "--private-ip", "192.168.0.1"}, "192.168.0.1 is already used by node node001"},
		"duplicate public IP":            {[]string{"add", "demo", "--hostname", "n3", "--public-ip", "51.159.0.1"}, "--public-ip: 51.159.0.1 is already used by node node001"},
		"a reserved private IP":          {[]string{"add", "demo", "--hostname", "n3", "--private-ip", "192.168.1.255"}, "--private-ip"},
		"bad IP":                         {[]string{"add", "demo", "--hostname", "n3", "--private-ip", "192.168.0.300"}, `--private-ip "192.168.0.300"`},
		"bad hostname":                   {[]string{"add", "demo", "--hostname", "Node_3"}, `hostname "Node_3"`},
		"a hostname of digits only":      {[]string{"add", "demo", "--hostname", "4242"}, `hostname "4242": invalid name: want a-z, 0-9 and '-', 1 to 63 characters, no leading or trailing '-', not digits only`},
		"existing hostname":              {[]string{"add", "demo", "--hostname", "node001"}, "node node001 in platform demo: already exists"},
		"unknown platform":               {[]string{"add", "nope", "--hostname", "n3"}, `platform "nope": platform not found (known platforms: demo)`},
		"unknown node":                   {[]string{"allocate", "node999", "platform.x"}, `node "node999"`},
		"unknown provider":               {[]string{"add", "other", "--provider", "gcp"}, `provider "gcp": unknown provider (known: aws, hetzner, manual, ovh, pxe, scaleway)`},
		"bad platform name":              {[]string{"add", "My_Platform"}, `platform "My_Platform"`},
		"unknown flag":                   {[]string{"list", "--frobnicate"}, "unknown flag: --frobnicate"},
		"missing argument":               {[]string{"show"}, "usage: plasma-node show"},
		"bad output format":              {[]string{"list", "-o", "xml"}, `--output "xml": want table, wide, name, json or yaml`},
		"mixing node and platform flags": {[]string{"add", "demo", "--hostname", "n3", "--provider", "ovh"}, "--provider sets up a platform"},
		"unknown command":                {[]string{"frob"}, "unknown command"},
		"help of an unknown topic":       {[]string{"help", "nosuch"}, `unknown help topic "nosuch"`},
		"an unknown completion shell":    {[]string{"completion", "nosuch"}, `unknown command "nosuch" for "plasma-node completion"`},
		"a project folder that is not":   {[]string{"list", "--dir", "/nonexistent"}, "project folder /nonexistent: no project folder"},
		"a bad log level":                {[]string{"list", "--log-level", "loud"}, `--log-level "loud"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := setup(t)
			before := snapshot(t, dir)
			r := plasma(t, dir, tc.args...)
			if r.code != 2 {
				t.Errorf("exit = %d, want 2; stderr %q", r.code, r.err)
			}
			if !strings.Contains(r.err, tc.want) {
				t.Errorf("stderr %q does not contain %q", r.err, tc.want)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestMalformedNodeFileIsNamed(t *testing.T) {
	dir := setup(t)
	os.WriteFile(filepath.Join(dir, "platforms/demo/nodes/broken.yaml"), []byte("hostname: broken\nzones: [a\n"), 0o644)
	r := plasma(t, dir, "list")
	if r.code != 1 || !strings.Contains(r.err, filepath.Join("platforms", "demo", "nodes", "broken.yaml")+": malformed file: yaml: line 2: ") {
		t.Errorf("exit %d, stderr %q; want 1 naming the file and its line 2", r.code, r.err)
	}
	// The other nodes are listed, the broken file is a row of its own.
	if !strings.Contains(r.stdout, "node001") || !strings.Contains(r.stdout, "node002") || !regexp.MustCompile(`(?m)^demo\s+broken\s+-\s+-\s+BROKEN: `).MatchString(r.stdout) {
		t.Errorf("list with a broken file:\n%s", r.stdout)
	}
	// A command about another node works.
	if out := mustRun(t, dir, "show", "node001"); !strings.Contains(out, "Hostname:    node001") {
		t.Errorf("show node001 with a broken neighbour:\n%s", out)
	}
	mustRun(t, dir, "allocate", "node002", "platform.cognition.knowledge")
}

func TestVersion(t *testing.T) {
	out := mustRun(t, t.TempDir(), "version")
	if !strings.HasPrefix(out, "plasma-node ") {
		t.Errorf("version = %q", out)
	}
	if flag := mustRun(t, t.TempDir(), "--version"); flag != out {
		t.Errorf("--version = %q, want what version prints, %q", flag, out)
	}
}

// TestEveryCommandHasShortAndExample walks the whole command tree, help
// and completion included.
func TestEveryCommandHasShortAndExample(t *testing.T) {
	var out, errb bytes.Buffer
	root := newRoot(&app{out: &out}, &out, &errb)
	if missing := cli.MissingHelp(root); len(missing) > 0 {
		t.Errorf("commands without help:\n%s", strings.Join(missing, "\n"))
	}
	var n int
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		n++
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	if n < 14 { // 8 commands, help, completion and its 4 shells, and the root
		t.Errorf("walked %d commands; the tree lost some", n)
	}
}

func TestCompletionAndJSONLogs(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{"completion", sh}, &out, &errb); code != 0 || !strings.Contains(out.String(), "plasma-node") {
			t.Errorf("completion %s: exit %d, %d bytes, %s", sh, code, out.Len(), errb.String())
		}
	}
	dir := t.TempDir()
	// Quiet by default: the human line, no log.
	r := plasma(t, dir, "add", "quiet")
	if r.code != 0 || r.err != "" || !strings.HasPrefix(r.stdout, "Created platform quiet") {
		t.Errorf("add without -v: exit %d, stdout %q, stderr %q; want the one line and an empty stderr", r.code, r.stdout, r.err)
	}
	if r := plasma(t, dir, "add", "loud", "-v"); r.code != 0 || !strings.Contains(r.err, "level=INFO") {
		t.Errorf("add -v: exit %d, stderr %q; want INFO lines", r.code, r.err)
	}
	if r := plasma(t, dir, "add", "lvl", "--log-level", "bogus"); r.code != 2 || !strings.Contains(r.err, `--log-level "bogus": want debug, info, warn or error`) {
		t.Errorf("--log-level bogus: exit %d, stderr %q", r.code, r.err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"--dir", dir, "--log-format", "json", "--log-level", "info", "add", "demo"}, &out, &errb); code != 0 {
		t.Fatalf("add: %d %s", code, errb.String())
	}
	var rec map[string]any
	if err := json.Unmarshal(errb.Bytes(), &rec); err != nil || rec["msg"] != "platform created" || rec["platform"] != "demo" || rec["level"] != "INFO" {
		t.Errorf("--log-format json: %v: %q", err, errb.String())
	}
}

// TestProjectFolderMustBeAFolder: --dir naming a file or nothing is bad
// input (exit 2, "not a directory"), not a topology error (exit 1) or an
// empty list.
func TestProjectFolderMustBeAFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "platforms.yaml")
	if err := os.WriteFile(file, []byte("x: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{file: "not a directory", filepath.Join(t.TempDir(), "nope"): "no such file or directory"} {
		r := plasma(t, dir, "list")
		if r.code != 2 || !strings.Contains(r.err, want) || !strings.Contains(r.err, dir) {
			t.Errorf("--dir %s: exit %d %q, want 2 naming the folder and %q", dir, r.code, r.err, want)
		}
	}
}
