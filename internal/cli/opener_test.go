package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneSessionOpener: every command opens its fabric through app.open
// (issue 14: one shared session opener, not one copy per command), and
// walks it through app.discover, except discover's own walk with its
// --start and --max-hops. A command that calls source.Open or
// discover.Run itself fails here, naming the function.
func TestOneSessionOpener(t *testing.T) {
	allowed := map[string]string{
		"source.Open":  "open",
		"discover.Run": "discover runDiscover",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	opens := 0
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok {
					callee := x.Name + "." + sel.Sel.Name
					if who, ok := allowed[callee]; ok && !strings.Contains(" "+who+" ", " "+fn.Name.Name+" ") {
						t.Errorf("%s: %s calls %s: open the fabric with app.open (openOptions)", fset.Position(call.Pos()), fn.Name.Name, callee)
					}
					if x.Name == "a" && sel.Sel.Name == "open" {
						opens++
					}
				}
				return true
			})
		}
	}
	// check and sweep open through runSweep: 8 callers, one opener.
	if opens < 8 {
		t.Errorf("app.open called from %d places, want every command's (8)", opens)
	}
}
