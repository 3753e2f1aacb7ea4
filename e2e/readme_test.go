package e2e

// TestREADME runs the shell examples of README.md and of every page under
// docs/, so that every one of them is a passing example. Keep it green
// when you add documentation: the convention is short.
//
//   - Every ```sh block runs, in the file's order, each command on its own
//     (a line ending in \ continues on the next), through bash -c with
//     -e and pipefail, and must exit 0. Each file is a subtest of its
//     own (TestREADME/docs/cloud.md), and its blocks share one temporary
//     project folder as the working folder, and one environment: the
//     built plasma-node and node-provisioner and the real tofu first on
//     PATH; HOME, NODE_PROVISIONER_STATE_DIR and
//     NODE_PROVISIONER_SECRETS_DIR in temporary folders; a fake Hetzner
//     Cloud API (internal/fakehcloud) as HCLOUD_ENDPOINT with a valid
//     HCLOUD_TOKEN and the hcloud plugin from the mirror, holding server
//     4711 (named edge-4711) made outside tofu, for the join example;
//     the Go caches of the test's own environment.
//   - Optional parts, a word starting with [ up to its matching ], are
//     left out, unless the directive "with" names their first word. A word
//     with alternatives a|b|c (outside quotes and comments) runs the
//     command once per alternative (all combinations). Comments (# after a
//     blank) are dropped before that.
//   - A ```yaml, ```json or ```toml block whose first line is "# NAME" (a
//     relative path without blanks) is written to NAME in the project
//     folder, for the blocks after it.
//   - A ```text block right after a ```sh block is the standard output of
//     that block's last command, compared exactly (trailing blanks aside).
//   - Directives are HTML comments on the lines right above a block, one
//     per comment:
//     <!-- readme-test: skip REASON --> the block is not run (keep these
//     few, and say why);
//     <!-- readme-test: with --flag ... --> keeps those optional parts;
//     <!-- readme-test: in the checkout --> runs the block in the module's
//     root instead of the project folder (for go run; write nothing there);
//     <!-- readme-test: files NAME ... --> copies e2e/testdata/readme/NAME
//     into the project folder first.
//
// Other fenced blocks (```go, ```yaml without a file name) are not run.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakehcloud"
	"github.com/plasmactl/plasma-node/internal/tofutest"
)

// readmeBlock is one fenced block of the README.
type readmeBlock struct {
	line  int      // line of the opening fence
	lang  string   // the fence's info string
	lines []string // the block's lines
	// directives are the readme-test comments right above it.
	directives []string
}

// readmeBlocks returns the README's fenced blocks in order.
func readmeBlocks(text string) []readmeBlock {
	var out []readmeBlock
	var cur *readmeBlock
	var directives []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		switch {
		case cur != nil && trim == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		case strings.HasPrefix(trim, "```"):
			cur = &readmeBlock{line: n, lang: strings.TrimPrefix(trim, "```"), directives: directives}
			directives = nil
		case strings.HasPrefix(trim, "<!-- readme-test:") && strings.HasSuffix(trim, "-->"):
			d := strings.TrimSuffix(strings.TrimPrefix(trim, "<!-- readme-test:"), "-->")
			directives = append(directives, strings.TrimSpace(d))
		case trim == "":
		default:
			directives = nil
		}
	}
	return out
}

// directive returns the argument of the block's directive named name and
// whether it has one.
func (b readmeBlock) directive(name string) (string, bool) {
	for _, d := range b.directives {
		if d == name {
			return "", true
		}
		if rest, ok := strings.CutPrefix(d, name+" "); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

// commands returns the block's commands, continuation lines joined.
func (b readmeBlock) commands() []string {
	var out []string
	cur := ""
	for _, l := range b.lines {
		if s, ok := strings.CutSuffix(strings.TrimRight(l, " \t"), `\`); ok {
			cur += s
			continue
		}
		cur += l
		if strings.TrimSpace(cur) != "" {
			out = append(out, cur)
		}
		cur = ""
	}
	return out
}

// words splits a command line at blanks outside quotes and drops a
// comment; quotes stay in the words.
func words(line string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range line {
		switch {
		case quote != 0:
			cur.WriteRune(r)
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
			cur.WriteRune(r)
		case r == ' ' || r == '\t':
			flush()
		case r == '#' && cur.Len() == 0:
			flush()
			return out
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return out
}

// expand turns one README command into the commands to run: optional
// parts left out unless their first word is in with, alternatives
// multiplied out.
func expand(line string, with []string) []string {
	var kept []string
	ws := words(line)
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if !strings.HasPrefix(w, "[") {
			kept = append(kept, w)
			continue
		}
		// An optional part runs to the word ending its bracket.
		part := []string{strings.TrimPrefix(w, "[")}
		for depth := strings.Count(w, "[") - strings.Count(w, "]"); depth > 0 && i+1 < len(ws); {
			i++
			depth += strings.Count(ws[i], "[") - strings.Count(ws[i], "]")
			part = append(part, ws[i])
		}
		last := len(part) - 1
		part[last] = strings.TrimSuffix(part[last], "]")
		for _, f := range with {
			if part[0] == f {
				kept = append(kept, part...)
				break
			}
		}
	}
	cmds := [][]string{nil}
	for _, w := range kept {
		alts := []string{w}
		if split := strings.Split(w, "|"); len(split) > 1 && !strings.ContainsAny(w, `'"<>()`) && !slices.Contains(split, "") {
			alts = split
		}
		var next [][]string
		for _, c := range cmds {
			for _, a := range alts {
				next = append(next, append(append([]string(nil), c...), a))
			}
		}
		cmds = next
	}
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i] = strings.Join(c, " ")
	}
	return out
}

// docFiles returns the files whose examples run, relative to the module
// root: README.md, then docs/*.md in name order.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, p := range pages {
		files = append(files, filepath.Join("docs", filepath.Base(p)))
	}
	return files
}

// TestREADME runs the examples of the README and of every page under
// docs/, each file in a project and an environment of its own; see the
// top of this file.
func TestREADME(t *testing.T) {
	root := tofutest.ModuleRoot()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	for _, file := range docFiles(t, root) {
		t.Run(filepath.ToSlash(file), func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join(root, file))
			if err != nil {
				t.Fatal(err)
			}
			runDocFile(ctx, t, root, file, string(text))
		})
	}
}

// runDocFile runs one file's examples in a new project folder.
func runDocFile(ctx context.Context, t *testing.T, root, file, text string) {
	env := readmeEnv(t)
	project := t.TempDir()
	t.Cleanup(func() { readmeCleanup(project, env) })
	blocks := readmeBlocks(text)
	ran := 0
	for i, b := range blocks {
		at := fmt.Sprintf("%s:%d", file, b.line)
		if name, ok := strings.CutPrefix(firstLine(b), "# "); ok && b.lang != "sh" && b.lang != "go" && filepath.IsLocal(name) && !strings.Contains(name, " ") {
			path := filepath.Join(project, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, strings.Join(b.lines, "\n")+"\n")
			continue
		}
		if b.lang != "sh" {
			continue
		}
		if reason, ok := b.directive("skip"); ok {
			t.Logf("%s: skipped: %s", at, reason)
			continue
		}
		dir := project
		if _, ok := b.directive("in the checkout"); ok {
			dir = root
		}
		if files, ok := b.directive("files"); ok {
			for _, f := range strings.Fields(files) {
				data, err := os.ReadFile(filepath.Join(root, "e2e", "testdata", "readme", f))
				if err != nil {
					t.Fatalf("%s: files: %v", at, err)
				}
				writeFile(t, filepath.Join(project, f), string(data))
			}
		}
		with, _ := b.directive("with")
		var last string
		for _, c := range b.commands() {
			for _, cmd := range expand(c, strings.Fields(with)) {
				if cmd == "" {
					continue
				}
				last = runReadme(ctx, t, at, dir, env, cmd)
				ran++
			}
		}
		if i+1 < len(blocks) && blocks[i+1].lang == "text" {
			want := strings.Join(blocks[i+1].lines, "\n")
			if got := trimLines(last); got != trimLines(want) {
				t.Errorf("%s:%d: the output of the block at line %d's last command:\n%s\nwant (%s):\n%s", file, blocks[i+1].line, b.line, got, file, want)
			}
		}
	}
	t.Logf("%d commands of %s ran", ran, file)
}

// runReadme runs one command through bash in dir and returns its standard
// output, failing the test when it exits other than 0; at names the block
// (FILE:LINE).
func runReadme(ctx context.Context, t *testing.T, at, dir string, env []string, cmd string) string {
	t.Helper()
	c := exec.CommandContext(ctx, "bash", "-c", "set -eo pipefail\n"+cmd)
	c.Dir, c.Env = dir, env
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	start := time.Now()
	err := c.Run()
	t.Logf("%s: %s (%s)", at, cmd, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s: %s: %v\nstdout:\n%s\nstderr:\n%s", at, cmd, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// readmeEnv returns the environment the README's commands run in: the
// binaries and tofu first on PATH, temporary homes and state folders, and
// the fake Hetzner Cloud API with server 4711.
func readmeEnv(t *testing.T) []string {
	t.Helper()
	tofu := tofutest.Binary(t)
	rc := tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Hcloud))
	const token = "readmeReadmeReadmeReadmeReadmeReadmeReadmeReadmeReadmeReadme0001"
	fake := fakehcloud.Start(token)
	t.Cleanup(fake.Close)
	fake.AddServerID(4711, "edge-4711", "cx22", "ubuntu-24.04", "fsn1")
	path := t.TempDir()
	for _, b := range []string{filepath.Join(bin, "plasma-node"), filepath.Join(bin, "node-provisioner"), tofu} {
		if err := os.Symlink(b, filepath.Join(path, filepath.Base(b))); err != nil {
			t.Fatal(err)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "PLASMA_NODE_") && !strings.HasPrefix(name, "NODE_PROVISIONER_") && !strings.HasPrefix(name, "HCLOUD_") &&
			!slices.Contains([]string{"HOME", "PATH", "GOCACHE", "GOMODCACHE", "GOPATH"}, name) {
			env = append(env, kv)
		}
	}
	// The Go caches stay where they are: HOME moves, and go run would
	// otherwise build everything again in a cold cache.
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output(); err == nil {
		if vals := strings.Split(strings.TrimSpace(string(out)), "\n"); len(vals) == 3 {
			env = append(env, "GOCACHE="+vals[0], "GOMODCACHE="+vals[1], "GOPATH="+vals[2])
		}
	}
	return append(env, "PATH="+path+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+t.TempDir(),
		"NODE_PROVISIONER_STATE_DIR="+t.TempDir(), "NODE_PROVISIONER_SECRETS_DIR="+filepath.Join(t.TempDir(), "secrets"),
		"TF_CLI_CONFIG_FILE="+rc, "HCLOUD_TOKEN="+token, "HCLOUD_ENDPOINT="+fake.Endpoint(), "PG_CONN_STR=")
}

// readmeCleanup closes any window an example left open under the project
// and stops the processes an example started in the background and wrote
// the pid of to a *.pid file in the project folder (when a later example
// failed before stopping them).
func readmeCleanup(project string, env []string) {
	matches, _ := filepath.Glob(filepath.Join(project, "*", "window.json"))
	for _, m := range matches {
		c := exec.Command(filepath.Join(bin, "node-provisioner"), "--state-dir", filepath.Dir(m), "disable")
		c.Env = env
		c.Run()
	}
	pids, _ := filepath.Glob(filepath.Join(project, "*.pid"))
	for _, f := range pids {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 1 {
			continue
		}
		// Only a process still running one of the built binaries: the
		// example may have stopped it, and its pid been reused.
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil || filepath.Dir(exe) != filepath.Clean(bin) {
			continue
		}
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
}

func firstLine(b readmeBlock) string {
	if len(b.lines) == 0 {
		return ""
	}
	return strings.TrimSpace(b.lines[0])
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// trimLines drops trailing blanks of each line and trailing empty lines.
func trimLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// knownDirectives are the readme-test directives the convention defines.
var knownDirectives = []string{"skip", "with", "in the checkout", "files"}

// TestREADMEConvention checks the expansion of README commands, and that
// every directive of README.md and docs/*.md is one the convention
// defines, a skip says why, and a file the files directive names exists.
func TestREADMEConvention(t *testing.T) {
	root := tofutest.ModuleRoot()
	for _, file := range docFiles(t, root) {
		text, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range readmeBlocks(string(text)) {
			for _, d := range b.directives {
				name, known := "", false
				for _, k := range knownDirectives {
					if d == k || strings.HasPrefix(d, k+" ") {
						name, known = k, true
					}
				}
				if !known {
					t.Errorf("%s:%d: unknown directive %q; want one of %q", file, b.line, d, knownDirectives)
				}
				if reason, ok := b.directive("skip"); name == "skip" && ok && reason == "" {
					t.Errorf("%s:%d: skip without a reason", file, b.line)
				}
			}
			if files, ok := b.directive("files"); ok {
				for _, f := range strings.Fields(files) {
					if _, err := os.Stat(filepath.Join(root, "e2e", "testdata", "readme", f)); err != nil {
						t.Errorf("%s:%d: files: %v", file, b.line, err)
					}
				}
			}
		}
	}
	tests := []struct {
		line string
		with []string
		want []string
	}{
		{"plasma-node add p [--private-network 10.10.0.0/16]", nil, []string{"plasma-node add p"}},
		{"plasma-node destroy p [--force] [--keep-nodes]", []string{"--force"}, []string{"plasma-node destroy p --force"}},
		{"plasma-node show p|s1 [-o table|json]", []string{"-o"}, []string{
			"plasma-node show p -o table", "plasma-node show p -o json", "plasma-node show s1 -o table", "plasma-node show s1 -o json"}},
		{"plasma-node list metal   # INSTALL pending|consumed", nil, []string{"plasma-node list metal"}},
		{`x --pool 'a=b|c' "${fpath[1]}/f" | grep y`, nil, []string{`x --pool 'a=b|c' "${fpath[1]}/f" | grep y`}},
		{"source <(plasma-node completion bash)", nil, []string{"source <(plasma-node completion bash)"}},
		{"x [--a [--b c]] d", []string{"--a"}, []string{"x --a [--b c] d"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, expand(tt.line, tt.with)); diff != "" {
			t.Errorf("expand(%q, %q) (-want +got):\n%s", tt.line, tt.with, diff)
		}
	}
	blocks := readmeBlocks("<!-- readme-test: with --x -->\n```sh\na \\\n  b\nc\n```\ntext\n```sh\nd\n```\n")
	got := [][]string{blocks[0].commands(), blocks[1].commands(), blocks[0].directives, blocks[1].directives}
	want := [][]string{{"a   b", "c"}, {"d"}, {"with --x"}, nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("blocks (-want +got):\n%s", diff)
	}
}
