// Package golden compares what a test produced with a golden file under
// testdata/, and rewrites the file instead when the test binary runs with
// -update:
//
//	go test ./internal/output -update
//
// Import it from _test.go files only: importing it registers the -update
// flag, which has no place in a program's own flags.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is package-level mutable state, the one kind the house rules
// accept: a test binary's flags must be registered before testing parses
// them, so the package that reads -update registers it, once, for every
// test package that imports it.
var update = flag.Bool("update", false, "rewrite golden files with what the tests produce")

// Check fails t unless got equals the file at path byte for byte, showing a
// line diff. Under -update it first writes got to path (creating its
// directory), so a run with -update passes and leaves the files to review
// with git diff.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("golden: creating the folder of %s: %v", path, err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("golden: writing %s: %v", path, err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (run the test with -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("golden: %s differs from what the test produced (-want +got); run with -update to accept it:\n%s", path, d)
	}
}
