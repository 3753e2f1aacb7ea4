package launchr_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakehcloud"
	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
)

// The binaries under test, built once by TestMain: plasmactl-node (Launchr
// with this plugin) and, to compare with, plasma-node.
var plasmactlNode, plasmaNode string

func TestMain(m *testing.M) {
	code, err := buildAndRun(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func buildAndRun(m *testing.M) (int, error) {
	if _, err := exec.LookPath("go"); err != nil {
		// Every test calls needBinaries, which skips (or fails under
		// PLASMA_E2E=1) with this reason.
		return m.Run(), nil
	}
	root := tofutest.ModuleRoot()
	if root == "" {
		return 0, fmt.Errorf("no plasma-node module above the test's folder")
	}
	bin, err := os.MkdirTemp("", "plasmactl-node-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(bin)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	plasmactlNode, plasmaNode = filepath.Join(bin, "plasmactl-node"), filepath.Join(bin, "plasma-node")
	builds := [][]string{
		{"build", "-ldflags", "-X github.com/launchrctl/launchr.name=plasmactl-node", "-o", plasmactlNode, "./cmd/plasmactl-node"},
		{"build", "-C", root, "-o", plasmaNode, "./cmd/plasma-node"},
	}
	for _, args := range builds {
		start := time.Now()
		if out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput(); err != nil {
			return 0, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		fmt.Fprintf(os.Stderr, "built %s in %s\n", filepath.Base(args[len(args)-1]), time.Since(start).Round(time.Second))
	}
	return m.Run(), nil
}

func needBinaries(t *testing.T) {
	t.Helper()
	if plasmactlNode == "" {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("needs the go command to build plasmactl-node")
		}
		t.Skip("needs the go command to build plasmactl-node")
	}
}

// result is one run of a binary, with the project folder written DIR,
// tofu's endpoint ENDPOINT, and Launchr's colours removed.
type result struct {
	Code   int
	Stdout string
	Stderr string
}

var (
	ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// Tofu creates servers in parallel, so which gets which id and
	// address varies from run to run.
	serverIDs = regexp.MustCompile(`\b10000\d\b`)
	publicIPs = regexp.MustCompile(`\b203\.0\.113\.\d+\b`)
)

// unordered writes server ids SERVER and fake public addresses PUBLIC.
func unordered(s string) string {
	return publicIPs.ReplaceAllString(serverIDs.ReplaceAllString(s, "SERVER"), "PUBLIC")
}

func run(t *testing.T, bin, dir, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %s: %v", filepath.Base(bin), strings.Join(args, " "), err)
	}
	clean := func(s string) string { return unordered(strings.ReplaceAll(ansi.ReplaceAllString(s, ""), dir, "DIR")) }
	return result{code, clean(out.String()), clean(errb.String())}
}

// launchrError returns the message of Launchr's "ERROR  message" line.
func launchrError(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "ERROR"); ok {
			return strings.TrimSpace(m)
		}
	}
	return ""
}

// snapshot returns the files under dir, endpoint in them written ENDPOINT.
func snapshot(t *testing.T, dir, endpoint string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".plasma":
			return filepath.SkipDir // tofu's working folder
		case !d.Type().IsRegular() || d.Name() == ".lock":
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		s := string(b)
		if endpoint != "" {
			s = strings.ReplaceAll(s, endpoint, "ENDPOINT")
		}
		files[rel] = unordered(s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// step is one command given to both binaries, in twin projects.
type step struct {
	args  []string
	stdin string
	// code is the exit code both must give.
	code int
	// setup changes both projects before the step.
	setup func(t *testing.T, dir string)
}

// compare runs each step with plasma-node in one project and with
// plasmactl-node in another, and checks that both exit alike, print the
// same (plasma-node's "plasma-node: message" on stderr is Launchr's
// "ERROR  message"), and leave the same files. keep picks the output
// lines to compare (nil: all of stdout).
func compare(t *testing.T, steps []step, keep func(string) bool, endpoint func(dir string) string) {
	t.Helper()
	pn, pc := t.TempDir(), t.TempDir()
	for _, s := range steps {
		name := strings.Join(s.args, " ")
		for _, dir := range []string{pn, pc} {
			if s.setup != nil {
				s.setup(t, dir)
			}
		}
		want := run(t, plasmaNode, pn, s.stdin, s.args...)
		got := run(t, plasmactlNode, pc, s.stdin, s.args...)
		if want.Code != s.code || got.Code != s.code {
			t.Errorf("%s: exit %d (plasma-node) and %d (plasmactl-node), want %d\nplasma-node: %s%s\nplasmactl-node: %s%s",
				name, want.Code, got.Code, s.code, want.Stdout, want.Stderr, got.Stdout, got.Stderr)
			continue
		}
		if s.code != 0 {
			// Warnings logged before the error (a zone new to the
			// platform, say) are log lines, not the error: Launchr's
			// logger words them its own way.
			var lines []string
			for l := range strings.Lines(want.Stderr) {
				if !strings.HasPrefix(l, "time=") && !isWarning(l) {
					lines = append(lines, l)
				}
			}
			msg := strings.TrimSpace(strings.TrimPrefix(strings.Join(lines, ""), "plasma-node: "))
			if diff := cmp.Diff(msg, launchrError(got.Stdout)); diff != "" {
				t.Errorf("%s: error message (-plasma-node +plasmactl-node):\n%s", name, diff)
			}
			if diff := cmp.Diff(warnings(want.Stderr), warnings(got.Stderr)); diff != "" {
				t.Errorf("%s: warnings (-plasma-node +plasmactl-node):\n%s", name, diff)
			}
			continue
		}
		wantOut, gotOut := want.Stdout, got.Stdout
		if keep != nil {
			wantOut, gotOut = filterLines(wantOut, keep), filterLines(gotOut, keep)
			if wantOut == "" {
				t.Errorf("%s: no message kept from plasma-node's output:\n%s", name, want.Stdout)
			}
		}
		if diff := cmp.Diff(wantOut, gotOut); diff != "" {
			t.Errorf("%s: output (-plasma-node +plasmactl-node):\n%s", name, diff)
		}
		// Questions and tofu's errors; not plasma-node's log, which
		// Launchr keeps off unless -v.
		notLog := func(l string) bool { return !strings.HasPrefix(l, "time=") }
		if diff := cmp.Diff(unvoiced(filterLines(want.Stderr, notLog)), unvoiced(filterLines(got.Stderr, notLog))); diff != "" {
			t.Errorf("%s: stderr (-plasma-node +plasmactl-node):\n%s", name, diff)
		}
		var ep, ec string
		if endpoint != nil {
			ep, ec = endpoint(pn), endpoint(pc)
		}
		if diff := cmp.Diff(snapshot(t, pn, ep), snapshot(t, pc, ec)); diff != "" {
			t.Errorf("%s: files (-plasma-node +plasmactl-node):\n%s", name, diff)
		}
	}
}

// warningLine is a warning in a binary's voice: "<binary>: warning: …".
var warningLine = regexp.MustCompile(`(?m)^[a-z-]+: (warning: )`)

func isWarning(l string) bool { return warningLine.MatchString(l) }

// warnings returns the warning lines of stderr without the binary's name.
func warnings(stderr string) []string {
	var out []string
	for l := range strings.Lines(stderr) {
		if isWarning(l) {
			out = append(out, unvoiced(l))
		}
	}
	return out
}

// unvoiced drops the binary's name from each warning line: plasma-node
// and plasmactl-node say a warning alike but for their own names.
func unvoiced(s string) string { return warningLine.ReplaceAllString(s, "$1") }

func filterLines(s string, keep func(string) bool) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if keep(l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// addPool gives a platform a pool, as provision would.
func addPool(platform, pool, zone string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		_, err := nodes.Open(dir, nodes.Options{}).UpdatePlatform(context.Background(), platform, func(p *nodes.Platform) error {
			p.Pools = map[string]nodes.Pool{pool: {Zones: []string{zone}, Machine: "cx22", Count: 1}}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestActionsMatchPlasmaNode runs every action on a manual platform
// (provision refuses one; join and destroy only write and remove node
// files) and the bad input of each, with both binaries.
func TestActionsMatchPlasmaNode(t *testing.T) {
	needBinaries(t)
	compare(t, []step{
		{args: []string{"node:add", "demo", "--provider", "manual", "--domain", "example.com"}},
		{args: []string{"node:add", "demo", "-d", "example.com"}},
		{args: []string{"node:add", "demo", "--hostname", "node001", "--public-ip", "51.159.0.1", "-z", "foundation.cluster.control"}},
		{args: []string{"node:add", "demo", "--hostname", "node002", "-z", "platform.cognition.data", "-z", "interaction.observability"}},
		{args: []string{"node:add", "demo", "--hostname", "node003", "--private-ip", "192.168.7.7"}},
		{args: []string{"node:list"}},
		{args: []string{"node:list", "demo", "-o", "json"}},
		{args: []string{"node:list", "--zone", "cognition", "-o", "yaml"}},
		{args: []string{"node:list", "--zone", "nowhere"}},
		{args: []string{"node:show", "demo"}},
		{args: []string{"node:show", "demo", "-o", "json"}},
		{args: []string{"node:show", "node001", "-o", "yaml"}},
		{args: []string{"node:show", "node002"}},
		{args: []string{"node:allocate", "node001"}},
		{args: []string{"node:allocate", "node001", "platform.cognition.data", "-e", "demo"}},
		{args: []string{"node:allocate", "node001", "platform.cognition.data", "-o", "json"}},
		{args: []string{"node:allocate", "node003", "platform.foundation.cluster.control/platform.foundation.cluster.nodes", "-o", "yaml"}, code: 2},
		{args: []string{"node:allocate", "node001", "platform.cognition.data/platform.cognition.knowledge"}},
		{args: []string{"node:register", "demo", "--hostname", "node004", "--public-ip", "51.159.0.4", "-z", "foundation.cluster.nodes"}},
		{args: []string{"node:query", "foundation", "-o", "json"}},
		{args: []string{"node:query", "foundation.cluster", "-e", "demo"}},
		{args: []string{"node:deallocate", "node001", "platform.cognition", "--recursive", "-o", "json"}},
		{args: []string{"node:deallocate", "node004", "platform.foundation.cluster.nodes"}},
		{args: []string{"node:validate"}},
		{args: []string{"node:validate", "demo", "-o", "json"}},
		// A server id of digits only is no hostname: --hostname is needed.
		{args: []string{"node:join", "demo", "--server-id", "4711", "--pool", "web"}, setup: addPool("demo", "web", "platform.web"), code: 2},
		{args: []string{"node:join", "demo", "--server-id", "4711", "--pool", "web", "--hostname", "web-4711"}},
		{args: []string{"node:join", "demo", "--server-id", "4712", "--pool", "web", "--hostname", "extra", "--dry-run"}},
		{args: []string{"node:join", "demo", "--server-id", "4712", "--pool", "web", "--hostname", "extra"}},
		{args: []string{"node:list", "demo"}},
		{args: []string{"node:delete", "extra", "--keep-server", "--force"}},
		{args: []string{"node:delete", "node004", "-e", "demo", "--force"}},

		// Bad input: exit 2, the same message, nothing written.
		{args: []string{"node:add", "demo", "--hostname", "n4", "-z", "Foundation.x"}, code: 2},
		{args: []string{"node:add", "demo", "--hostname", "n4", "--private-ip", "192.168.0.1"}, code: 2},
		{args: []string{"node:add", "demo", "--hostname", "n4", "--private-ip", "192.168.0.300"}, code: 2},
		{args: []string{"node:add", "demo", "--hostname", "Node_4"}, code: 2},
		{args: []string{"node:add", "demo", "--hostname", "n4", "--provider", "ovh"}, code: 2},
		{args: []string{"node:add", "demo", "--public-ip", "51.159.0.9"}, code: 2},
		{args: []string{"node:add", "demo", "--provider", "ovh"}, code: 2},
		{args: []string{"node:add", "nope", "--hostname", "n4"}, code: 2},
		{args: []string{"node:add", "other", "--provider", "gcp"}, code: 2},
		{args: []string{"node:add", "My_Platform"}, code: 2},
		{args: []string{"node:allocate", "node001", "platform.a/"}, code: 2},
		{args: []string{"node:allocate", "node002", "platform.foundation-"}, code: 2},
		{args: []string{"node:allocate", "node999", "platform.x"}, code: 2},
		{args: []string{"node:list", "-o", "xml"}, code: 2},
		{args: []string{"node:register", "demo", "--hostname", "node005"}, code: 2},
		{args: []string{"node:deallocate", "node001", "platform.interaction"}, code: 2},
		{args: []string{"node:query", "Foundation"}, code: 2},
		{args: []string{"node:validate", "nope"}, code: 2},
		{args: []string{"node:list", "nope"}, code: 2},
		{args: []string{"node:show", "nope"}, code: 2},
		{args: []string{"node:provision", "demo", "-z", "web:cx22"}, code: 2},
		{args: []string{"node:provision", "demo", "-z", "web:cx22:0"}, code: 2},
		{args: []string{"node:join", "demo", "--pool", "web"}, code: 2},
		{args: []string{"node:join", "demo", "--server-id", "4713"}, code: 2},
		{args: []string{"node:join", "demo", "--server-id", "4713", "--pool", "db"}, code: 2},
		{args: []string{"node:join", "demo", "--server-id", "4711", "--pool", "web"}, code: 2},
		{args: []string{"node:destroy", "nope", "--force"}, code: 2},
		{args: []string{"node:delete", "nope"}, code: 2},
		{args: []string{"node:reinstall", "node001", "--force"}, code: 2},
		{args: []string{"node:reinstall", "nope", "--force"}, code: 2},
		{args: []string{"node:reinstall", "node001", "--timeout", "0s"}, code: 2},

		// Failures: exit 1.
		{args: []string{"node:provision", "demo", "-z", "web:cx22:1"}, code: 1},
		// A manual platform's dry run shows the offline plan, saying
		// that provision refuses.
		{args: []string{"node:provision", "demo", "--dry-run"}},
		{args: []string{"node:provision", "demo", "--dry-run", "-o", "json"}},

		// Destroy asks for a typed "yes" on a terminal only: with stdin
		// not a terminal it refuses, naming --force, and removes nothing.
		{args: []string{"node:destroy", "demo"}, code: 1},
		{args: []string{"node:destroy", "demo"}, stdin: "yes\n", code: 1},
		{args: []string{"node:destroy", "demo", "--force", "--keep-nodes"}},
		{args: []string{"node:destroy", "demo", "--force"}},
		{args: []string{"node:list"}},
	}, nil, nil)
}

// TestLaunchrOwnInputChecks covers what Launchr checks before the action
// runs (a missing argument, an unknown option, too many arguments): it
// exits 1 for these, as for any Launchr action, where plasma-node exits 2.
func TestLaunchrOwnInputChecks(t *testing.T) {
	needBinaries(t)
	dir := t.TempDir()
	tests := map[string]struct {
		args []string
		want string
	}{
		"a missing argument":  {[]string{"node:show"}, "missing property 'name'"},
		"an unknown option":   {[]string{"node:list", "--frobnicate"}, "unknown flag: --frobnicate"},
		"too many arguments":  {[]string{"node:list", "a", "b"}, "accepts 1 arg(s), received 2"},
		"a non-boolean value": {[]string{"node:destroy", "demo", "--force=maybe"}, "--force"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := run(t, plasmactlNode, dir, "", tc.args...)
			if r.Code != 1 || !strings.Contains(r.Stdout+r.Stderr, tc.want) {
				t.Errorf("exit %d, output %q; want 1 and %q", r.Code, r.Stdout+r.Stderr, tc.want)
			}
		})
	}
	if diff := cmp.Diff(map[string]string{}, snapshot(t, dir, "")); diff != "" {
		t.Errorf("files written (-want +got):\n%s", diff)
	}
}

// TestActionsHaveTheirHelp checks that the binary lists every action and
// that each action's help names plasma-node's flags for that command.
func TestActionsHaveTheirHelp(t *testing.T) {
	needBinaries(t)
	dir := t.TempDir()
	top := run(t, plasmactlNode, dir, "", "--help")
	flagRE := regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z-]+)`)
	for _, name := range []string{"add", "allocate", "list", "show", "provision", "join", "destroy", "register", "deallocate", "query", "validate", "delete", "reinstall"} {
		if !strings.Contains(top.Stdout, "node:"+name) {
			t.Errorf("plasmactl-node --help does not list node:%s:\n%s", name, top.Stdout)
		}
		flags := func(bin string) []string {
			h := run(t, bin, dir, "", "node:"+name, "--help")
			out := h.Stdout
			if i := strings.Index(out, "Global Flags:"); i >= 0 {
				out = out[:i]
			}
			var fs []string
			for _, m := range flagRE.FindAllStringSubmatch(out, -1) {
				if m[1] != "help" {
					fs = append(fs, m[1])
				}
			}
			return fs
		}
		// plasma-node's --dir and --provisioner-dir are global flags; the
		// plugin has them on each action, as Launchr has no project flag
		// of its own.
		want := append(flags(plasmaNode), "dir", "provisioner-dir")
		got := flags(plasmactlNode)
		if diff := cmp.Diff(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))); diff != "" {
			t.Errorf("node:%s options (-plasma-node +plasmactl-node):\n%s", name, diff)
		}
	}
}

// TestProvisionJoinDestroyWithTofu runs node:provision, node:join and
// node:destroy with the real tofu and hcloud plugin against the fake
// Hetzner Cloud API (one per binary), comparing plasma-node's messages and
// the node files.
func TestProvisionJoinDestroyWithTofu(t *testing.T) {
	needBinaries(t)
	bin := tofutest.Binary(t)
	t.Setenv("TF_CLI_CONFIG_FILE", tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Hcloud)))
	t.Setenv("HCLOUD_TOKEN", "")
	token := strings.Repeat("f", 64)
	fakes := map[string]*fakehcloud.Fake{}
	fake := func(dir string) *fakehcloud.Fake {
		if fakes[dir] == nil {
			fakes[dir] = fakehcloud.Start(token)
			t.Cleanup(fakes[dir].Close)
		}
		return fakes[dir]
	}
	useFake := func(t *testing.T, dir string) {
		t.Helper()
		_, err := nodes.Open(dir, nodes.Options{}).UpdatePlatform(context.Background(), "demo", func(p *nodes.Platform) error {
			p.Infrastructure.API = nodes.API{URI: fake(dir).Endpoint(), Token: token}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	handmade := func(t *testing.T, dir string) {
		if s := fake(dir).AddServer("handmade", "cx22", "debian-12", "fsn1"); s.ID != 100003 {
			t.Fatalf("fake server id %d, want 100003", s.ID)
		}
	}
	messages := regexp.MustCompile(`^(PLATFORM|demo |Created |Node |Dry run|No changes|Joined |Removed |Kept |Plan: )`)
	tofuFlag := []string{"--tofu", bin}
	compare(t, []step{
		{args: []string{"node:add", "demo", "--provider", "hetzner"}},
		{args: append([]string{"node:provision", "demo", "-z", "web:cx22:2", "--dry-run"}, tofuFlag...), setup: useFake},
		{args: append([]string{"node:provision", "demo", "-z", "web:cx22:2"}, tofuFlag...), stdin: "y\n", code: 1},
		{args: append([]string{"node:provision", "demo", "-z", "web:cx22:2", "--auto-approve"}, tofuFlag...)},
		{args: append([]string{"node:provision", "demo", "--auto-approve"}, tofuFlag...)},
		{args: append([]string{"node:join", "demo", "--server-id", "100003", "--pool", "web", "--auto-approve"}, tofuFlag...), setup: handmade},
		{args: append([]string{"node:join", "demo", "--server-id", "abc", "--pool", "web"}, tofuFlag...), code: 2},
		{args: []string{"node:list", "demo"}},
		{args: append([]string{"node:destroy", "demo", "--force"}, tofuFlag...)},
	}, func(l string) bool { return messages.MatchString(l) }, func(dir string) string { return fake(dir).Endpoint() })
	for dir, f := range fakes {
		if n := len(f.Servers()); n != 0 {
			t.Errorf("%s: fake holds %d servers after destroy", dir, n)
		}
	}
}
