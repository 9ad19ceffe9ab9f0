package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/tool"
	"github.com/google/go-cmp/cmp"
)

func TestGlob(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"main.go":          "",
		"a/b/deep.go":      "",
		"a/x.ts":           "",
		"a/y.tsx":          "",
		"README.md":        "",
		".git/config.go":   "",
		".github/ci.yml":   "",
		"src/lib.go":       "",
		"src/sub/inner.go": "",
	})
	setMtimes(t, dir, "src/lib.go", "a/b/deep.go", "main.go", "src/sub/inner.go", "a/x.ts", "a/y.tsx", "README.md", ".github/ci.yml")
	abs := func(ps ...string) string {
		for i, p := range ps {
			ps[i] = filepath.Join(dir, p)
		}
		return strings.Join(ps, "\n")
	}
	tests := []struct {
		name    string
		input   map[string]any
		want    string
		isError bool
	}{
		{"doublestar newest first", map[string]any{"pattern": "**/*.go"}, abs("src/lib.go", "a/b/deep.go", "main.go", "src/sub/inner.go"), false},
		{"top level only", map[string]any{"pattern": "*.go"}, abs("main.go"), false},
		{"fixed prefix", map[string]any{"pattern": "src/*.go"}, abs("src/lib.go"), false},
		{"braces", map[string]any{"pattern": "**/*.{ts,tsx}"}, abs("a/x.ts", "a/y.tsx"), false},
		{"path", map[string]any{"pattern": "**/*.go", "path": "src"}, abs("src/lib.go", "src/sub/inner.go"), false},
		{"absolute pattern", map[string]any{"pattern": filepath.Join(dir, "a") + "/**/*.go"}, abs("a/b/deep.go"), false},
		{"hidden dirs skipped", map[string]any{"pattern": "**/ci.yml"}, "No files found", false},
		{"hidden dirs named", map[string]any{"pattern": "**/.github/ci.yml"}, abs(".github/ci.yml"), false},
		{"git is skipped", map[string]any{"pattern": "**/config.go"}, "No files found", false},
		{"git named outright", map[string]any{"pattern": ".git/*"}, abs(".git/config.go"), false},
		{"none", map[string]any{"pattern": "**/*.rs"}, "No files found", false},
		{"missing dir", map[string]any{"pattern": "*", "path": "nope"}, "", true},
		{"file as dir", map[string]any{"pattern": "*", "path": "main.go"}, "", true},
		{"bad pattern", map[string]any{"pattern": "[a-"}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, Glob(Options{}), tool.Env{Cwd: dir}, tc.input)
			if res.IsError != tc.isError {
				t.Fatalf("IsError = %v; text:\n%s", res.IsError, text(res))
			}
			if tc.isError {
				return
			}
			if diff := cmp.Diff(tc.want, text(res)); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGlobTruncates(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for i := range 5 {
		n := fmt.Sprintf("f%d.txt", i)
		names = append(names, n)
		writeTree(t, dir, map[string]string{n: ""})
	}
	setMtimes(t, dir, names...) // f0 newest
	res := call(t, Glob(Options{GlobMaxResults: 3}), tool.Env{Cwd: dir}, map[string]any{"pattern": "*.txt"})
	want := strings.Join([]string{
		filepath.Join(dir, "f0.txt"), filepath.Join(dir, "f1.txt"), filepath.Join(dir, "f2.txt"),
		"(Results are truncated: showing the 3 most recently modified of 5 files. Consider using a more specific path or pattern.)",
	}, "\n")
	if diff := cmp.Diff(want, text(res)); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	meta := res.Meta.(GlobMeta)
	if !meta.Truncated || meta.NumFiles != 5 || len(meta.Filenames) != 3 {
		t.Errorf("meta %+v", meta)
	}
}

func TestGlobSymlinkedRoot(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"real/a.go": ""})
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
		t.Skip(err)
	}
	res := call(t, Glob(Options{}), tool.Env{Cwd: dir}, map[string]any{"pattern": "*.go", "path": "link"})
	if got, want := text(res), filepath.Join(dir, "link", "a.go"); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestGlobPruner(t *testing.T) {
	tests := []struct {
		pattern, dir string
		want         bool
	}{
		{"*.go", "a", false},
		{"src/*.go", "src", true},
		{"src/*.go", "lib", false},
		{"src/*.go", "src/x", false},
		{"src/**/*.go", "src/x/y", true},
		{"**", "a/b", true},
		{"a/*/c.go", "a/b", true},
		{"{a,b}/*.go", "c", true}, // braces: no pruning
	}
	for _, tc := range tests {
		if got := newGlobPruner(tc.pattern).mayContain(tc.dir); got != tc.want {
			t.Errorf("%q mayContain(%q) = %v, want %v", tc.pattern, tc.dir, got, tc.want)
		}
	}
}
