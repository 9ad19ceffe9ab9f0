package builtin

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/tool"
	"github.com/google/go-cmp/cmp"
)

func TestGrep(t *testing.T) {
	dir := t.TempDir()
	var ctxFile strings.Builder
	for i := 1; i <= 12; i++ {
		word := "filler"
		if i == 3 || i == 5 || i == 10 {
			word = "MATCH"
		}
		fmt.Fprintf(&ctxFile, "%s %d\n", word, i)
	}
	writeTree(t, dir, map[string]string{
		"a.go":                "package a\n\nfunc Hello() {}\n// hello world\nvar x = 1\n",
		"b/b.go":              "package b\nfunc helloB() {}\n",
		"web/app.ts":          "const hello = 1;\n",
		"web/app.tsx":         "export const Hello = () => null;\n",
		"notes.md":            "Hello notes\n",
		"ctx.txt":             ctxFile.String(),
		"node_modules/m/i.js": "hello\n",
		".git/HEAD":           "hello\n",
		"bin.dat":             "hello\x00\x01",
		"web/gen/secret.ts":   "const hello = 2;\n",
	})
	setMtimes(t, dir, "web/app.ts", "b/b.go", "a.go", "web/app.tsx", "notes.md", "ctx.txt", "web/gen/secret.ts")
	p := func(rel string) string { return filepath.Join(dir, rel) }
	lines := func(ls ...string) string { return strings.Join(ls, "\n") }
	tests := []struct {
		name    string
		input   map[string]any
		want    string
		isError bool
		contain []string
	}{
		{name: "files_with_matches by mtime; skips node_modules, .git, binaries",
			input: map[string]any{"pattern": "hello"},
			want:  lines("Found 4 files", p("web/app.ts"), p("b/b.go"), p("a.go"), p("web/gen/secret.ts"))},
		{name: "ignore case",
			input: map[string]any{"pattern": "hello", "-i": true, "glob": "*.{md,tsx}"},
			want:  lines("Found 2 files", p("web/app.tsx"), p("notes.md"))},
		{name: "content",
			input: map[string]any{"pattern": "Hello", "path": "a.go", "output_mode": "content"},
			want:  p("a.go") + ":3:func Hello() {}"},
		{name: "content without line numbers",
			input: map[string]any{"pattern": "Hello", "path": "a.go", "output_mode": "content", "-n": false},
			want:  p("a.go") + ":func Hello() {}"},
		{name: "context -C merges touching groups",
			input: map[string]any{"pattern": "MATCH", "path": "ctx.txt", "output_mode": "content", "-C": 1},
			want: lines(
				p("ctx.txt")+"-2-filler 2", p("ctx.txt")+":3:MATCH 3", p("ctx.txt")+"-4-filler 4", p("ctx.txt")+":5:MATCH 5", p("ctx.txt")+"-6-filler 6",
				"--",
				p("ctx.txt")+"-9-filler 9", p("ctx.txt")+":10:MATCH 10", p("ctx.txt")+"-11-filler 11")},
		{name: "context -A",
			input: map[string]any{"pattern": "MATCH 1", "path": "ctx.txt", "output_mode": "content", "-A": 2},
			want:  lines(p("ctx.txt")+":10:MATCH 10", p("ctx.txt")+"-11-filler 11", p("ctx.txt")+"-12-filler 12")},
		{name: "context -B at file start, no numbers",
			input: map[string]any{"pattern": "MATCH 3", "path": "ctx.txt", "output_mode": "content", "-B": 5, "-n": false},
			want:  lines(p("ctx.txt")+"-filler 1", p("ctx.txt")+"-filler 2", p("ctx.txt")+":MATCH 3")},
		{name: "-A overrides -C",
			input: map[string]any{"pattern": "MATCH 3", "path": "ctx.txt", "output_mode": "content", "-C": 2, "-A": 1},
			want:  lines(p("ctx.txt")+"-1-filler 1", p("ctx.txt")+"-2-filler 2", p("ctx.txt")+":3:MATCH 3", p("ctx.txt")+"-4-filler 4")},
		{name: "count",
			input: map[string]any{"pattern": "MATCH|hello", "output_mode": "count", "type": "go"},
			want:  lines(p("a.go")+":1", p("b/b.go")+":1", "", "Found 2 matching lines across 2 files.")},
		{name: "count several per file",
			input: map[string]any{"pattern": "MATCH", "output_mode": "count"},
			want:  lines(p("ctx.txt")+":3", "", "Found 3 matching lines across 1 file.")},
		{name: "glob with slash is relative to the root",
			input: map[string]any{"pattern": "hello", "glob": "web/*.ts"},
			want:  lines("Found 1 file", p("web/app.ts"))},
		{name: "negated glob",
			input: map[string]any{"pattern": "hello", "glob": "!*.go"},
			want:  lines("Found 2 files", p("web/app.ts"), p("web/gen/secret.ts"))},
		{name: "negated glob prunes directories",
			input: map[string]any{"pattern": "hello", "glob": "!gen"},
			want:  lines("Found 3 files", p("web/app.ts"), p("b/b.go"), p("a.go"))},
		{name: "type",
			input: map[string]any{"pattern": "(?i)hello", "type": "ts"},
			want:  lines("Found 3 files", p("web/app.ts"), p("web/app.tsx"), p("web/gen/secret.ts"))},
		{name: "type alias",
			input: map[string]any{"pattern": "Hello", "type": "markdown"},
			want:  lines("Found 1 file", p("notes.md"))},
		{name: "unknown type",
			input: map[string]any{"pattern": "x", "type": "cobol"}, isError: true,
			contain: []string{`Unknown file type "cobol"`, "go, ", "rust"}},
		{name: "head_limit files",
			input: map[string]any{"pattern": "hello", "head_limit": 2},
			want:  lines("Found 4 files (showing the first 2, head_limit)", p("web/app.ts"), p("b/b.go"))},
		{name: "head_limit content",
			input: map[string]any{"pattern": "MATCH", "output_mode": "content", "head_limit": 2},
			want:  lines(p("ctx.txt")+":3:MATCH 3", p("ctx.txt")+":5:MATCH 5", "", "(Showing the first 2 lines (head_limit); there are more matches.)")},
		{name: "head_limit count",
			input:   map[string]any{"pattern": "hello", "output_mode": "count", "head_limit": 1},
			contain: []string{p("a.go") + ":1\n\nFound 4 matching lines across 4 files. (Showing the first 1 files, head_limit.)"}},
		{name: "bad regexp",
			input: map[string]any{"pattern": "func("}, isError: true,
			contain: []string{`Invalid regular expression "func("`, "missing closing )", "RE2"}},
		{name: "newline needs multiline",
			input: map[string]any{"pattern": `Hello\(\) \{\}\n// hello`}, isError: true,
			contain: []string{"multiline: true"}},
		{name: "multiline",
			input: map[string]any{"pattern": `Hello\(\) \{\}\n// hello`, "multiline": true, "output_mode": "content"},
			want:  lines(p("a.go")+":3:func Hello() {}", p("a.go")+":4:// hello world")},
		{name: "multiline dot matches newline",
			input: map[string]any{"pattern": `MATCH 3.*MATCH 5`, "multiline": true, "output_mode": "count"},
			want:  lines(p("ctx.txt")+":3", "", "Found 3 matching lines across 1 file.")},
		{name: "anchors match per line",
			input: map[string]any{"pattern": `^var`, "output_mode": "content"},
			want:  p("a.go") + ":5:var x = 1"},
		{name: "no matches content",
			input: map[string]any{"pattern": "zzz", "output_mode": "content"}, want: "No matches found"},
		{name: "no matches files",
			input: map[string]any{"pattern": "zzz"}, want: "No files found"},
		{name: "no matches count",
			input: map[string]any{"pattern": "zzz", "output_mode": "count"}, want: "No matches found"},
		{name: "missing path",
			input: map[string]any{"pattern": "x", "path": "nope"}, isError: true, contain: []string{"Path does not exist"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, Grep(Options{}), tool.Env{Cwd: dir}, tc.input)
			got := text(res)
			if res.IsError != tc.isError {
				t.Fatalf("IsError = %v; text:\n%s", res.IsError, got)
			}
			if tc.contain == nil {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("text (-want +got):\n%s", diff)
				}
			}
			for _, c := range tc.contain {
				if !strings.Contains(got, c) {
					t.Errorf("text does not contain %q:\n%s", c, got)
				}
			}
		})
	}
}

// Context groups in different files are separated too, as ripgrep does.
func TestGrepContextAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"1.txt": "x\nhit\n", "2.txt": "hit\ny\n"})
	res := call(t, Grep(Options{}), tool.Env{Cwd: dir}, map[string]any{"pattern": "hit", "output_mode": "content", "-C": 1})
	want := strings.Join([]string{
		filepath.Join(dir, "1.txt") + "-1-x", filepath.Join(dir, "1.txt") + ":2:hit", "--",
		filepath.Join(dir, "2.txt") + ":1:hit", filepath.Join(dir, "2.txt") + "-2-y",
	}, "\n")
	if diff := cmp.Diff(want, text(res)); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}

func TestGrepOutputLimit(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"f.txt": strings.Repeat("match this line\n", 1000)})
	res := call(t, Grep(Options{GrepOutputLimit: 500}), tool.Env{Cwd: dir}, map[string]any{"pattern": "match", "output_mode": "content"})
	got := text(res)
	body, note, ok := strings.Cut(got, "\n\n(")
	if !ok || !strings.Contains(note, "Output truncated at 500 characters") {
		t.Fatalf("no truncation note:\n%s", got)
	}
	if len(body) > 500 {
		t.Errorf("body is %d characters, over the 500 limit", len(body))
	}
}

func TestGrepLongLinesTruncated(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"min.js": "needle" + strings.Repeat("x", 1000) + "\n"})
	res := call(t, Grep(Options{}), tool.Env{Cwd: dir}, map[string]any{"pattern": "needle", "output_mode": "content"})
	want := filepath.Join(dir, "min.js") + ":1:needle" + strings.Repeat("x", grepMaxColumns-6) + "… [506 characters truncated]"
	if got := text(res); got != want {
		t.Errorf("got %q", got)
	}
}

func TestSplitGlobs(t *testing.T) {
	tests := map[string][]string{
		"*.go":             {"*.go"},
		"*.{ts,tsx}":       {"*.{ts,tsx}"},
		"*.go,*.md":        {"*.go", "*.md"},
		"*.go  !*_test.go": {"*.go", "!*_test.go"},
		"":                 nil,
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, splitGlobs(in)); diff != "" {
			t.Errorf("splitGlobs(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestGrepListCapped(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("file%02d.txt", i)] = "hit\n"
	}
	writeTree(t, dir, files)
	for _, mode := range []string{"files_with_matches", "count"} {
		res := call(t, Grep(Options{GrepOutputLimit: 300}), tool.Env{Cwd: dir}, map[string]any{"pattern": "hit", "output_mode": mode})
		got := text(res)
		body, _, _ := strings.Cut(got, "\n(")
		if !strings.Contains(got, "more files not shown: output capped at 300 characters") || len(body) > 300 {
			t.Errorf("%s: %d characters before the note:\n%s", mode, len(body), got)
		}
	}
}

func TestGrepRefusesSpecialFiles(t *testing.T) {
	res := call(t, Grep(Options{}), tool.Env{Cwd: t.TempDir()}, map[string]any{"pattern": "x", "path": "/dev/null"})
	if !res.IsError || !strings.Contains(text(res), "not a regular file") {
		t.Errorf("got %v %q", res.IsError, text(res))
	}
}
