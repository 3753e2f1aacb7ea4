// The dependency checker: which packages a set of packages links, read from
// the import graph that `go list -deps` reports, in the manner of
// tailscale's tstest/deptest. It reads the graph only: no source text, no
// build. It lives in a test file because this package's deps_test.go is its
// one user.

package plasmanode_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

// EnvE2E names the environment variable that, set to "1", turns a missing
// go command from a skip into a failure.
const EnvE2E = "PLASMA_E2E"

// DepChecker states which packages the packages matching Pkgs may link.
// A dependency is every package `go list -deps` reports for them, that is
// everything compiled into a binary built from them, tests excluded.
type DepChecker struct {
	// Pkgs are the package patterns checked, as go list takes them
	// ("./cmd/plasma-node", "./providers/...", ".").
	Pkgs []string
	// Dir is the directory go list runs in. Empty means the current one.
	Dir string
	// GOOS and GOARCH select the build. Empty means the go command's default.
	GOOS, GOARCH string
	// BadDeps maps an import path to the reason it must not be linked. A key
	// matches that exact path; a key ending in "/..." also matches every path
	// under it, as a go pattern does ("github.com/pin/tftp/..." matches
	// "github.com/pin/tftp/v3"); a key ending in "/" matches only paths under
	// it ("github.com/jackc/").
	BadDeps map[string]string
	// Allow lists import paths, with the same matching as BadDeps, that no
	// BadDeps key forbids: "github.com/x/mod/answer/..." under a bad
	// "github.com/x/mod/".
	Allow []string
	// OnlyAllowed, when not nil, lists (with the same matching as BadDeps)
	// the only packages outside the standard library that may be linked.
	OnlyAllowed []string
	// Direct restricts the check to the packages that Pkgs import
	// themselves, not what those link in turn.
	Direct bool
	// Known, when not empty, names the issue that still breaks the rule: the
	// violations are logged, not failed. Delete the field to enforce the rule.
	Known string
}

// Violation is one package a DepChecker forbids.
type Violation struct {
	// Dep is the forbidden import path.
	Dep string
	// Reason says why: a BadDeps reason, or that OnlyAllowed does not name it.
	Reason string
	// Chain is the shortest import chain from one of the checked packages to
	// Dep, both included.
	Chain []string
}

// String formats v as "dep (reason): a -> b -> dep".
func (v Violation) String() string {
	return fmt.Sprintf("%s (%s): %s", v.Dep, v.Reason, strings.Join(v.Chain, " -> "))
}

// RequireGo skips t when the go command is missing, or fails it when
// PLASMA_E2E=1, where every tool must be present.
func RequireGo(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv(EnvE2E) == "1" {
			t.Fatalf("needs the go command: %v", err)
		}
		t.Skipf("needs the go command: %v", err)
	}
}

// Check fails t for every violation, or logs them when c.Known is set. It
// skips t without the go command (see RequireGo).
func (c DepChecker) Check(t testing.TB) {
	t.Helper()
	RequireGo(t)
	vs, err := c.Violations()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if c.Known != "" {
			t.Logf("known (%s): %v links %s", c.Known, c.Pkgs, v)
			continue
		}
		t.Errorf("%v links %s", c.Pkgs, v)
	}
}

// Violations lists the packages that c forbids and Pkgs link, sorted by
// import path.
func (c DepChecker) Violations() ([]Violation, error) {
	g, err := c.graph()
	if err != nil {
		return nil, err
	}
	var vs []Violation
	for _, dep := range g.order {
		if g.root[dep] {
			continue
		}
		if c.Direct && !g.direct[dep] {
			continue
		}
		reason, bad := c.forbids(dep, g.std[dep])
		if !bad {
			continue
		}
		vs = append(vs, Violation{Dep: dep, Reason: reason, Chain: g.chain(dep)})
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Dep < vs[j].Dep })
	return vs, nil
}

func (c DepChecker) forbids(dep string, std bool) (string, bool) {
	if slices.ContainsFunc(c.Allow, func(p string) bool { return matches(p, dep) }) {
		return "", false
	}
	// The longest matching key gives the reason, so the answer is stable.
	best := ""
	for p := range c.BadDeps {
		if matches(p, dep) && len(p) > len(best) {
			best = p
		}
	}
	if best != "" {
		return c.BadDeps[best], true
	}
	if c.OnlyAllowed != nil && !std && !slices.ContainsFunc(c.OnlyAllowed, func(p string) bool { return matches(p, dep) }) {
		return "not in OnlyAllowed", true
	}
	return "", false
}

// matches reports whether the BadDeps-style key p names path.
func matches(p, path string) bool {
	if tree, ok := strings.CutSuffix(p, "/..."); ok {
		return path == tree || strings.HasPrefix(path, tree+"/")
	}
	if strings.HasSuffix(p, "/") {
		return strings.HasPrefix(path, p)
	}
	return path == p
}

type graph struct {
	order   []string            // every package, in go list order
	imports map[string][]string // package -> its direct imports
	root    map[string]bool     // packages matched by Pkgs
	direct  map[string]bool     // packages a root imports itself
	std     map[string]bool
}

// graph runs go list once and reads the import graph of c.Pkgs.
func (c DepChecker) graph() (*graph, error) {
	if len(c.Pkgs) == 0 {
		return nil, fmt.Errorf("deps: no packages to check")
	}
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}\t{{.DepOnly}}\t{{.Standard}}\t{{join .Imports \" \"}}"}, c.Pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = c.Dir
	cmd.Env = os.Environ()
	if c.GOOS != "" {
		cmd.Env = append(cmd.Env, "GOOS="+c.GOOS)
	}
	if c.GOARCH != "" {
		cmd.Env = append(cmd.Env, "GOARCH="+c.GOARCH)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps %s: %w\n%s", strings.Join(c.Pkgs, " "), err, stderr.Bytes())
	}
	g := &graph{imports: map[string][]string{}, root: map[string]bool{}, direct: map[string]bool{}, std: map[string]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("go list: unexpected line %q", sc.Text())
		}
		p := f[0]
		g.order = append(g.order, p)
		g.imports[p] = strings.Fields(f[3])
		g.root[p] = f[1] == "false"
		g.std[p] = f[2] == "true"
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read go list output: %w", err)
	}
	for p := range g.root {
		if g.root[p] {
			for _, imp := range g.imports[p] {
				g.direct[imp] = true
			}
		}
	}
	return g, nil
}

// chain returns the shortest import chain from a root package to dep.
func (g *graph) chain(dep string) []string {
	prev := map[string]string{}
	var queue []string
	for _, p := range g.order {
		if g.root[p] {
			prev[p] = ""
			queue = append(queue, p)
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == dep {
			var c []string
			for ; p != ""; p = prev[p] {
				c = append(c, p)
			}
			slices.Reverse(c)
			return c
		}
		for _, imp := range g.imports[p] {
			if _, seen := prev[imp]; !seen {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return []string{dep}
}
