package plasmanode_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLibrariesAreQuiet keeps the library packages quiet: none writes to
// the process's stdout or stderr (fmt.Print*, os.Stdout, os.Stderr), and
// no error text names a command-line flag ("--hostname"): the binaries
// own the terminal and the flags.
func TestLibrariesAreQuiet(t *testing.T) {
	fset := token.NewFileSet()
	for _, root := range []string{".", "nodes", "providers", "tofu", "zones", "ipam"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != root && (root == "." || d.Name() == "testdata") {
					return filepath.SkipDir // "." is the root package alone
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok {
						name := id.Name + "." + n.Sel.Name
						if name == "os.Stdout" || name == "os.Stderr" || (id.Name == "fmt" && strings.HasPrefix(n.Sel.Name, "Print")) {
							t.Errorf("%s: %s: a library writes to the terminal", fset.Position(n.Pos()), name)
						}
					}
				case *ast.CallExpr:
					if !isErrorCall(n.Fun) {
						return true
					}
					for _, a := range n.Args {
						lit, ok := a.(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						if s, _ := strconv.Unquote(lit.Value); strings.Contains(s, "--") {
							t.Errorf("%s: error text %s names a flag: say it in domain words and let the binaries add the flag", fset.Position(lit.Pos()), lit.Value)
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// isErrorCall reports whether fun is fmt.Errorf or errors.New.
func isErrorCall(fun ast.Expr) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && (id.Name == "fmt" && sel.Sel.Name == "Errorf" || id.Name == "errors" && sel.Sel.Name == "New")
}
