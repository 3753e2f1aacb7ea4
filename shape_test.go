package plasmanode_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// goFiles lists the module's Go files (the nested launchr module
// included) by folder, skipping testdata; test files only when tests is
// set.
func goFiles(t *testing.T, tests bool) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && (tests || !strings.HasSuffix(path, "_test.go")) {
			out[filepath.Dir(path)] = append(out[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// library reports whether the package in dir is one other programs
// embed: not a binary, an example, a test harness or the CLI helpers.
func library(dir string) bool {
	parts := strings.Split(filepath.ToSlash(dir), "/")
	switch {
	case slices.ContainsFunc(parts, func(p string) bool {
		return p == "cmd" || p == "examples" || p == "e2e" || p == "bench" || p == "launchr" || strings.HasSuffix(p, "test")
	}):
		return false
	case dir == filepath.Join("internal", "cli") || dir == filepath.Join("internal", "nodecmd") || dir == filepath.Join("internal", "fakehcloud"):
		return false
	}
	return true
}

// TestNoFileOver600Lines keeps files, tests included, small enough to
// read whole, and a binary's files (under cmd/) to 250 lines: flags, one
// call and printing.
func TestNoFileOver600Lines(t *testing.T) {
	for dir, files := range goFiles(t, true) {
		limit := 600
		if strings.HasPrefix(filepath.ToSlash(dir), "cmd/") {
			limit = 250
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(b, []byte("\n")); n > limit {
				t.Errorf("%s has %d lines, over %d", f, n, limit)
			}
		}
	}
}

// TestLibrariesAreQuiet: a library writes to no terminal (os.Stdout,
// os.Stderr, fmt.Print*, the log package, print builtins) and its error
// texts name no command-line flag ("--…"): the binaries own the terminal
// and the flags' words.
func TestLibrariesAreQuiet(t *testing.T) {
	checked := 0
	for dir, files := range goFiles(t, false) {
		if !library(dir) {
			continue
		}
		for _, f := range files {
			checked++
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range quietProblems(fset, file) {
				t.Error(p)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked %d library files; the walk is broken", checked)
	}
}

// quietProblems lists where file writes to the terminal or puts a flag
// name into an error.
func quietProblems(fset *token.FileSet, file *ast.File) []string {
	var out []string
	pkgOf := func(e ast.Expr) (string, string, bool) {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return "", "", false
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return "", "", false
		}
		return id.Name, sel.Sel.Name, true
	}
	stdLog := slices.ContainsFunc(file.Imports, func(s *ast.ImportSpec) bool { return s.Path.Value == `"log"` && s.Name == nil })
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if pkg, name, ok := pkgOf(n); ok && pkg == "os" && (name == "Stdout" || name == "Stderr") {
				out = append(out, fset.Position(n.Pos()).String()+": uses os."+name)
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "print" || id.Name == "println") {
				out = append(out, fset.Position(n.Pos()).String()+": calls "+id.Name)
			}
			pkg, name, ok := pkgOf(n.Fun)
			if !ok {
				return true
			}
			if (pkg == "fmt" && strings.HasPrefix(name, "Print")) || (pkg == "log" && stdLog) {
				out = append(out, fset.Position(n.Pos()).String()+": calls "+pkg+"."+name)
			}
			if (pkg == "errors" && name == "New") || (pkg == "fmt" && name == "Errorf") {
				if len(n.Args) > 0 {
					if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, err := strconv.Unquote(lit.Value); err == nil && strings.Contains(s, "--") {
							out = append(out, fset.Position(lit.Pos()).String()+": error text names a flag: "+s)
						}
					}
				}
			}
		}
		return true
	})
	return out
}

// TestQuietCheckFindsWhatItLooksFor proves the check above can fail.
func TestQuietCheckFindsWhatItLooksFor(t *testing.T) {
	src := `package p
import ("errors"; "fmt"; "os"; "log")
func f() error {
	fmt.Println("hi")
	fmt.Fprintln(os.Stderr, "hi")
	log.Printf("x")
	println("x")
	_ = fmt.Errorf("pass --hostname: %w", errors.New("x"))
	return errors.New("--server-id: empty")
}`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := quietProblems(fset, file); len(got) != 6 {
		t.Errorf("found %d problems, want 6: %q", len(got), got)
	}
}

// TestNodeProvisionerImportsTheWindowOnly: the binary is flags, one call
// and printing; every role package stays behind pxe.
func TestNodeProvisionerImportsTheWindowOnly(t *testing.T) {
	RequireGo(t)
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "./cmd/node-provisioner").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/plasmactl/plasma-node/"
	allowed := []string{mod + "pxe", mod + "pxe/api", mod + "pxe/apitoken", mod + "pxe/backend", mod + "pxe/backend/regbackend", mod + "pxe/bmc", mod + "pxe/power", mod + "pxe/client", mod + "pxe/daemon", mod + "pxe/events", mod + "pxe/store", mod + "pxe/store/postgres", mod + "pxe/registrar", mod + "pxe/secret", mod + "pxe/tlscert", mod + "pxe/sitepublish", mod + "pxe/bootassets", mod + "pxe/sbchain", mod + "pxe/window", mod + "pxe/discovery", mod + "pxe/discovery/agent", mod + "pxe/registry", mod + "pxe/enrol", mod + "internal/cli", "github.com/spf13/cobra", "github.com/spf13/pflag"}
	for _, imp := range strings.Fields(string(out)) {
		std := !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".")
		if !std && !slices.Contains(allowed, imp) {
			t.Errorf("cmd/node-provisioner imports %s; want only %v and the standard library", imp, allowed)
		}
	}
}
