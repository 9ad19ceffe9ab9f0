package builtin

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/tool"
	"github.com/google/go-cmp/cmp"
)

func TestLS(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"b.txt":               "",
		"a/z.go":              "",
		"a/y/deep.go":         "",
		"a/debug.log":         "",
		".git/HEAD":           "",
		".env":                "",
		"node_modules/m/i.js": "",
		"build/out.bin":       "",
		"empty/.keep":         "",
	})
	tests := []struct {
		name    string
		input   map[string]any
		want    []string
		isError bool
	}{
		{"tree", map[string]any{"path": dir}, []string{
			"- " + dir + "/",
			"  - a/",
			"    - debug.log",
			"    - y/",
			"      - deep.go",
			"    - z.go",
			"  - b.txt",
			"  - build/",
			"    - out.bin",
			"  - empty/",
			"  - node_modules/",
			"(3 hidden or ignored not listed: dot-files and what .gitignore and .ignore files exclude; LS such a directory by its path to list it)",
		}, false},
		{"ignore names and paths", map[string]any{"path": ".", "ignore": []string{"*.log", "build", "a/y", ".keep"}}, []string{
			"- " + dir + "/",
			"  - a/",
			"    - z.go",
			"  - b.txt",
			"  - empty/",
			"  - node_modules/",
			"(2 hidden or ignored not listed: dot-files and what .gitignore and .ignore files exclude; LS such a directory by its path to list it)",
		}, false},
		{"subdirectory", map[string]any{"path": "a/y"}, []string{
			"- " + filepath.Join(dir, "a/y") + "/",
			"  - deep.go",
		}, false},
		{"empty", map[string]any{"path": "empty", "ignore": []string{".keep"}}, []string{
			"- " + filepath.Join(dir, "empty") + "/",
			"  (empty directory)",
		}, false},
		{"missing", map[string]any{"path": "nope"}, nil, true},
		{"file", map[string]any{"path": "b.txt"}, nil, true},
		{"bad ignore", map[string]any{"path": ".", "ignore": []string{"[x"}}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, LS(Options{}), tool.Env{Cwd: dir}, tc.input)
			if res.IsError != tc.isError {
				t.Fatalf("IsError = %v; text:\n%s", res.IsError, text(res))
			}
			if tc.isError {
				return
			}
			if diff := cmp.Diff(strings.Join(tc.want, "\n"), text(res)); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
}

// The cap keeps the top of the tree: breadth first.
func TestLSTruncatesBreadthFirst(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"z.txt": ""}
	for i := range 10 {
		files[fmt.Sprintf("a/f%d", i)] = ""
	}
	writeTree(t, dir, files)
	res := call(t, LS(Options{LSMaxEntries: 4}), tool.Env{Cwd: dir}, map[string]any{"path": dir})
	want := strings.Join([]string{
		"There are more than 4 entries under " + dir + ". Use LS on a subdirectory, or Glob and Grep, to explore further. The first 4 entries are listed below:",
		"",
		"- " + dir + "/",
		"  - a/",
		"    - f0",
		"    - f1",
		"  - z.txt",
	}, "\n")
	if diff := cmp.Diff(want, text(res)); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}
