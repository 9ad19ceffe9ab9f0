package bench

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// compiledLater are the packages whose package-level regexps and templates
// are still compiled when the binary starts. None is left; the list only
// shrinks.
var compiledLater = []string{}

// TestNoCompileAtInit keeps regexp and template compilation out of package
// initialisation: every command, `cadre version` included, pays for each
// package-level regexp.MustCompile before main runs (internal/command's
// seven took ~2 ms of a one-turn run). Compile on first use instead, with
// sync.OnceValue.
func TestNoCompileAtInit(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "examples") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if slices.Contains(compiledLater, filepath.ToSlash(rel)) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					if call := compileAtInit(v); call != "" {
						t.Errorf("%s: %s runs when the program starts; wrap it in sync.OnceValue", fset.Position(v.Pos()), call)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// compileAtInit names the regexp or template compilation that evaluating
// the package-level initialiser e performs, or returns "". A function
// literal (a sync.OnceValue's argument) runs later, so it is not entered.
func compileAtInit(e ast.Expr) string {
	var found string
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && found == "" {
				switch x.Name + "." + n.Sel.Name {
				case "regexp.MustCompile", "regexp.Compile", "regexp.MustCompilePOSIX", "template.Must":
					found = x.Name + "." + n.Sel.Name
				}
			}
		}
		return true
	})
	return found
}
