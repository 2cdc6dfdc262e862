package checks

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSchemaDocListsEveryRole: every entity role this package can emit
// is in docs/schema-report.md's role list (trial E12: spine and node were
// not). The roles are read from the source, not copied: each string given
// as an Entity's Role, assigned to a .Role, or passed as the role of
// entityOf/nodeEntity/baselineEntity-style helpers (a parameter named
// role).
func TestSchemaDocListsEveryRole(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Which argument of which function is a role.
	roleArg := map[string]int{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				i := 0
				for _, fl := range fd.Type.Params.List {
					for _, n := range fl.Names {
						if n.Name == "role" {
							roleArg[fd.Name.Name] = i
						}
						i++
					}
				}
			}
		}
	}
	roles := map[string]token.Position{}
	lit := func(e ast.Expr) {
		if b, ok := e.(*ast.BasicLit); ok && b.Kind == token.STRING {
			if s, err := strconv.Unquote(b.Value); err == nil && s != "" {
				roles[s] = fset.Position(b.Pos())
			}
		}
	}
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.KeyValueExpr:
					if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Role" {
						lit(n.Value)
					}
				case *ast.AssignStmt:
					for i, l := range n.Lhs {
						if s, ok := l.(*ast.SelectorExpr); ok && s.Sel.Name == "Role" && i < len(n.Rhs) {
							lit(n.Rhs[i])
						}
					}
				case *ast.CallExpr:
					name := ""
					switch fn := n.Fun.(type) {
					case *ast.Ident:
						name = fn.Name
					case *ast.SelectorExpr:
						name = fn.Sel.Name
					}
					if i, ok := roleArg[name]; ok && i < len(n.Args) {
						lit(n.Args[i])
					}
				}
				return true
			})
		}
	}
	if len(roles) < 10 {
		t.Fatalf("only %d roles found in the source (%v): the scan is broken", len(roles), roles)
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "schema-report.md"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile("(?m)^\\| `entities` .*$").Find(doc)
	if line == nil {
		t.Fatal("docs/schema-report.md has no `entities` row")
	}
	for r, pos := range roles {
		if !strings.Contains(string(line), "`"+r+"`") {
			t.Errorf("role %q (%s) is not in docs/schema-report.md's entities row", r, pos)
		}
	}
}
