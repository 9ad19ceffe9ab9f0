package cadre_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExportedAPINamesNoInternalType guards the SDK's surface: an SDK user
// cannot import internal/ packages, so a type from one in an exported
// signature, field, alias or constant is a type they can hold but not
// name, build or switch on. The root package is type-checked from its
// source against the export data `go list -export` reports for its
// dependencies, and every exported identifier's type is walked.
func TestExportedAPINamesNoInternalType(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list export data with")
	}
	pkg := loadRoot(t)
	var found []string
	for _, name := range pkg.Scope().Names() {
		obj := pkg.Scope().Lookup(name)
		if !obj.Exported() {
			continue
		}
		w := apiWalker{root: pkg, seen: map[types.Type]bool{}}
		w.object(obj)
		found = append(found, w.found...)
	}
	if len(found) > 0 {
		slices.Sort(found)
		t.Errorf("the exported API names %d internal type(s); define root types and convert at the boundary:\n\t%s",
			len(found), strings.Join(slices.Compact(found), "\n\t"))
	}
}

// loadRoot type-checks the root package's non-test files.
func loadRoot(t *testing.T) *types.Package {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -export: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for line := range strings.Lines(string(out)) {
		path, file, _ := strings.Cut(strings.TrimSpace(line), "\t")
		exports[path] = file
	}
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "cadre" {
			files = append(files, f)
		}
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	pkg, err := (&types.Config{Importer: imp}).Check("github.com/cadre-dev/cadre", fset, files, nil)
	if err != nil {
		t.Fatalf("type-check the root package: %v", err)
	}
	return pkg
}

// apiWalker collects, for one exported identifier, every place its
// exported surface mentions a type declared in an internal package.
type apiWalker struct {
	root  *types.Package
	seen  map[types.Type]bool
	found []string
}

func (w *apiWalker) object(obj types.Object) {
	switch o := obj.(type) {
	case *types.TypeName:
		if a, ok := o.Type().(*types.Alias); ok {
			w.typ(o.Name(), a)
			return
		}
		named, ok := o.Type().(*types.Named)
		if !ok {
			return
		}
		w.typ(o.Name(), named.Underlying())
		for m := range types.NewMethodSet(types.NewPointer(named)).Methods() {
			if m.Obj().Exported() {
				w.typ(o.Name()+"."+m.Obj().Name(), m.Type())
			}
		}
	default:
		w.typ(obj.Name(), obj.Type())
	}
}

func (w *apiWalker) typ(where string, t types.Type) {
	if t == nil {
		return
	}
	switch t := t.(type) {
	case *types.Alias:
		if internal(t.Obj().Pkg()) {
			w.report(where, t.Obj())
			return
		}
		w.typ(where, t.Rhs())
	case *types.Named:
		if internal(t.Obj().Pkg()) {
			w.report(where, t.Obj())
		}
		for a := range t.TypeArgs().Types() {
			w.typ(where, a)
		}
		// An exported root type is walked as an identifier of its own; a
		// public package's types are that package's business.
		if t.Obj().Pkg() == w.root && !t.Obj().Exported() && !w.seen[t] {
			w.seen[t] = true
			w.typ(where, t.Underlying())
		}
	case *types.Pointer:
		w.typ(where, t.Elem())
	case *types.Slice:
		w.typ(where, t.Elem())
	case *types.Array:
		w.typ(where, t.Elem())
	case *types.Chan:
		w.typ(where, t.Elem())
	case *types.Map:
		w.typ(where, t.Key())
		w.typ(where, t.Elem())
	case *types.Signature:
		for v := range t.Params().Variables() {
			w.typ(where, v.Type())
		}
		for v := range t.Results().Variables() {
			w.typ(where, v.Type())
		}
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() || f.Embedded() {
				w.typ(where+"."+f.Name(), f.Type())
			}
		}
	case *types.Interface:
		for m := range t.Methods() {
			if m.Exported() {
				w.typ(where+"."+m.Name(), m.Type())
			}
		}
		for e := range t.EmbeddedTypes() {
			w.typ(where, e)
		}
	}
}

func (w *apiWalker) report(where string, obj types.Object) {
	w.found = append(w.found, fmt.Sprintf("%s: %s.%s", where, obj.Pkg().Path(), obj.Name()))
}

func internal(p *types.Package) bool {
	return p != nil && (strings.Contains(p.Path(), "/internal/") || strings.HasSuffix(p.Path(), "/internal"))
}

// TestVocabularyPackagesImportNothingInternal: the root re-exports the
// public vocabulary packages' types with aliases, and TestExportedAPI…
// walks an alias only as far as the public type it names. What keeps those
// types free of internal ones is that their packages cannot name any: they
// import no internal package, directly or through another.
func TestVocabularyPackagesImportNothingInternal(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list imports with")
	}
	pkgs := []string{"./event", "./record", "./approval", "./hook", "./agent", "./view", "./llm", "./tool"}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		if p := strings.TrimSpace(line); strings.Contains(p, "/internal/") && strings.HasPrefix(p, "github.com/cadre-dev/cadre/") {
			t.Errorf("a public vocabulary package depends on %s: its types could carry an internal one into the SDK", p)
		}
	}
}
