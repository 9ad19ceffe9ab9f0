package command

import (
	"os"
	"path/filepath"
	"testing"
)

// writeFiles creates each file (slash-separated path → content) under
// root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// names lists the names in s.
func names(s *Set) []string {
	var out []string
	for _, c := range s.All() {
		out = append(out, c.Name)
	}
	return out
}

// problemStrings formats problems as their Error strings, with root
// replaced by "ROOT" so that expectations read as paths.
func problemStrings(root string, problems []Problem) []string {
	var out []string
	for _, p := range problems {
		rel, err := filepath.Rel(root, p.Path)
		if err == nil {
			p.Path = "ROOT/" + filepath.ToSlash(rel)
		}
		out = append(out, p.Error())
	}
	return out
}

// loadProject writes files into a fresh project and loads it.
func loadProject(t *testing.T, files map[string]string) (root string, s *Set, problems []Problem) {
	t.Helper()
	root = t.TempDir()
	writeFiles(t, root, files)
	s, problems = Load(root, "")
	return root, s, problems
}
