package ids

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestOneIDSource: no non-test Go file of the module outside this package
// makes a uuid itself. A second source would lose New's guarantees (time
// order, one place that says what a failing clock or random source does).
func TestOneIDSource(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found two levels up: %v", err)
	}
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if abs, _ := filepath.Abs(path); abs == self {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		for _, at := range uuidMakers(t, path) {
			t.Errorf("%s calls %s: use ids.New, the module's one id source", at.pos, at.call)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the module: %v", err)
	}
	if files < 50 {
		t.Fatalf("looked at only %d Go files: the walk missed the module", files)
	}
}

type uuidCall struct{ pos, call string }

// uuidMakers returns the calls of uuid.New* (however the import is named)
// in the file at path.
func uuidMakers(t *testing.T, path string) []uuidCall {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	name := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/google/uuid" {
			name = "uuid"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	if name == "." {
		return []uuidCall{{fset.Position(f.Package).String(), "a dot import of github.com/google/uuid"}}
	}
	var calls []uuidCall
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && strings.HasPrefix(sel.Sel.Name, "New") {
			calls = append(calls, uuidCall{fset.Position(sel.Pos()).String(), name + "." + sel.Sel.Name})
		}
		return true
	})
	return calls
}

// TestUUIDMakers: the check sees the calls however the import is spelt,
// and lets through what makes no id.
func TestUUIDMakers(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"plain", "import \"github.com/google/uuid\"\nvar _ = uuid.NewString()", []string{"uuid.NewString"}},
		{"renamed", "import u \"github.com/google/uuid\"\nvar _, _ = u.NewV7()", []string{"u.NewV7"}},
		{"passed as a value", "import \"github.com/google/uuid\"\nvar f = uuid.NewRandom", []string{"uuid.NewRandom"}},
		{"dot import", "import . \"github.com/google/uuid\"\nvar _ = NewString()", []string{"a dot import of github.com/google/uuid"}},
		{"parsing is fine", "import \"github.com/google/uuid\"\nvar _, _ = uuid.Parse(\"x\")", nil},
		{"another package's New", "import uuid \"example.com/other\"\nvar _ = uuid.New()", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.go")
			if err := os.WriteFile(path, []byte("package x\n\n"+tt.src+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range uuidMakers(t, path) {
				got = append(got, c.call)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("found %q, want %q", got, tt.want)
			}
		})
	}
}
