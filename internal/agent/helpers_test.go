package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// tree writes files (slash paths relative to root) and returns root.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// fixture reads testdata/name.
func fixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// entry finds the only entry whose file is path (relative to root).
func entryAt(t *testing.T, r *Registry, path string) Entry {
	t.Helper()
	var found []Entry
	for _, e := range r.Entries() {
		if e.Definition.Path == path {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d entries for %s; entries: %+v", len(found), path, r.Entries())
	}
	return found[0]
}

func ptr[T any](v T) *T { return &v }
