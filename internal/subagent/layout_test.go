package subagent

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// profileFiles hold the tool profiles (claude, opencode, harness, gateway).
func isProfileFile(name string) bool {
	for _, p := range []string{"claude_", "opencode_", "harness", "gateway"} {
		if strings.HasPrefix(name, p) && !strings.HasSuffix(name, "_test.go") {
			return true
		}
	}
	return false
}

// TestProfilesUseTheCore: the profiles reach runs and the service only
// through the core's calls (doc.go): no profile file names a field of
// liveTask or the service's locks and run tables. It reads the source, so a
// profile that starts reaching in fails here, not in review.
func TestProfilesUseTheCore(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	parsed := map[string]*ast.File{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed[name] = f
	}
	fieldsOf := func(match func(file, typ string) bool) map[string]bool {
		out := map[string]bool{}
		for name, f := range parsed {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok || !match(name, ts.Name.Name) {
					return true
				}
				if st, ok := ts.Type.(*ast.StructType); ok {
					for _, fl := range st.Fields.List {
						for _, id := range fl.Names {
							out[id.Name] = true
						}
					}
				}
				return true
			})
		}
		return out
	}
	forbidden := fieldsOf(func(_, typ string) bool { return typ == "liveTask" })
	for _, f := range []string{"mu", "running", "reserved", "delivery", "lane", "fg"} {
		forbidden[f] = true
	}
	// Names the profiles' own types, the spawn call's outcome and the
	// service's settings (its depth, its config) share with liveTask are
	// theirs to use; "mu" only on a profile's own value.
	allowed := fieldsOf(func(file, typ string) bool { return isProfileFile(file) || typ == "outcome" || typ == "Service" })
	for f := range allowed {
		if !slices.Contains([]string{"mu", "running", "reserved", "delivery", "lane", "fg"}, f) {
			delete(forbidden, f)
		}
	}
	if len(forbidden) < 20 {
		t.Fatalf("found only %d core fields to look for: %v", len(forbidden), forbidden)
	}
	var bad []string
	for name, f := range parsed {
		if !isProfileFile(name) {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || !forbidden[sel.Sel.Name] {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "h" && sel.Sel.Name == "mu" {
				return true // harnessProfile's own lock
			}
			bad = append(bad, fset.Position(sel.Pos()).String()+": ."+sel.Sel.Name)
			return true
		})
	}
	slices.Sort(bad)
	for _, b := range bad {
		t.Errorf("a profile reaches into the core: %s", b)
	}
}
