package events_test

import (
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

	"github.com/plasmactl/plasma-node/pxe/events"
)

// kinds is the vocabulary, as the scan looks for it.
var kinds = []events.Kind{
	events.DHCPOffer, events.DHCPAck, events.DHCPIgnored, events.TFTP, events.TFTPFailed, events.Script,
	events.Kernel, events.Initrd, events.Asset, events.Answer, events.Refused, events.FirstBoot,
	events.Webhook, events.Installed, events.BMC, events.Started, events.Failed, events.Shim, events.Grub,
	events.Discovered,
}

// distinct are kinds no other word of the code is spelled as: no source
// outside this package spells them at all. The other kinds are common
// words (a folder, a flag, a JSON key), which only a comparison or a
// field of an event may not spell.
var distinct = map[string]bool{string(events.DHCPOffer): true, string(events.DHCPAck): true, string(events.DHCPIgnored): true, string(events.TFTPFailed): true, "tftp-sent": true}

// TestNoEventKindIsSpelledOutsideThisPackage scans every Go file of the
// module (tests too, testdata aside) for a string literal of an event
// kind used as one: compared with, switched on, or set as a Kind, Stage
// or Step, converted to a Kind, or a distinct kind's word anywhere.
// Events are named by this package's constants, so a renamed kind cannot
// leave a reader matching the old word.
func TestNoEventKindIsSpelledOutsideThisPackage(t *testing.T) {
	root := moduleRoot(t)
	isKind := map[string]bool{}
	for _, k := range kinds {
		isKind[string(k)] = true
	}
	self := filepath.Join(root, "pxe", "events")
	var problems []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case path == self, name == "testdata", name == ".tools", name == ".git", name == "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		report := func(lit *ast.BasicLit, how string) {
			problems = append(problems, rel+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)+": "+lit.Value+" "+how)
		}
		kindLit := func(e ast.Expr) *ast.BasicLit {
			lit, ok := e.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return nil
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && isKind[s] {
				return lit
			}
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && distinct[s] {
					report(n, "spells an event kind")
				}
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					for _, side := range [2][2]ast.Expr{{n.X, n.Y}, {n.Y, n.X}} {
						if lit := kindLit(side[1]); lit != nil && eventField(side[0]) {
							report(lit, "compared with an event's kind")
						}
					}
				}
			case *ast.SwitchStmt:
				if n.Tag == nil || !eventField(n.Tag) {
					return true
				}
				for _, c := range n.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						if lit := kindLit(e); lit != nil {
							report(lit, "as a case of an event's kind")
						}
					}
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && kindField[id.Name] {
					if lit := kindLit(n.Value); lit != nil {
						report(lit, "set as an event's "+id.Name)
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Kind" && len(n.Args) == 1 {
					if lit := kindLit(n.Args[0]); lit != nil {
						report(lit, "converted to a Kind")
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
	for _, p := range problems {
		t.Errorf("%s; name it by its constant of package events", p)
	}
}

// kindField are the fields that hold an event kind.
var kindField = map[string]bool{"Kind": true, "Stage": true, "Step": true}

// eventField reports whether e reads a kind field (x.Kind, x.Stage,
// x.Step) or a variable named for one (kind, stage, step).
func eventField(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return kindField[e.Sel.Name]
	case *ast.Ident:
		return e.Name == "kind" || e.Name == "stage" || e.Name == "step"
	case *ast.CallExpr: // string(e.Kind)
		return len(e.Args) == 1 && eventField(e.Args[0])
	}
	return false
}

// moduleRoot returns the folder of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !strings.HasSuffix(dir, "launchr") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

// TestTheVocabularyLinksNothing: package events is the standard library
// and itself only, so a client (plasma-node, the API client) names events
// without linking a server or its DHCP and TFTP stacks.
func TestTheVocabularyLinksNothing(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("needs the go command")
		}
		t.Skip("needs the go command")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if deps := strings.Fields(string(out)); !slices.Equal(deps, []string{"github.com/plasmactl/plasma-node/pxe/events"}) {
		t.Errorf("package events depends on %v, want the standard library only", deps)
	}
}
