package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/tool"
	"github.com/google/go-cmp/cmp"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"old.txt": "old\n", "adir/x": ""})
	if err := os.Chmod(filepath.Join(dir, "old.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := tool.Env{Cwd: dir}
	tests := []struct {
		name     string
		path     string
		content  string
		wantText string
		isError  bool
	}{
		{"create with parents", "new/deep/f.go", "package f\n\nvar x = 1\n", "Created file " + filepath.Join(dir, "new/deep/f.go") + " (21 bytes, 3 lines).", false},
		{"overwrite", "old.txt", "one line", "Overwrote " + filepath.Join(dir, "old.txt") + " (8 bytes, 1 line).", false},
		{"empty content", "empty.txt", "", "Created file " + filepath.Join(dir, "empty.txt") + " (0 bytes, 0 lines).", false},
		{"directory", "adir", "x", "", true},
		{"parent is a file", "old.txt/child", "x", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, Write(Options{}), env, map[string]any{"file_path": tc.path, "content": tc.content})
			if res.IsError != tc.isError {
				t.Fatalf("IsError = %v; text %q", res.IsError, text(res))
			}
			if tc.isError {
				return
			}
			if text(res) != tc.wantText {
				t.Errorf("text %q, want %q", text(res), tc.wantText)
			}
			if got := readFile(t, filepath.Join(dir, tc.path)); got != tc.content {
				t.Errorf("file holds %q, want %q", got, tc.content)
			}
		})
	}
	if fi, _ := os.Stat(filepath.Join(dir, "old.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("overwrite changed mode to %v", fi.Mode().Perm())
	}
}

func TestEdit(t *testing.T) {
	const src = "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	tests := []struct {
		name     string
		files    map[string]string
		input    map[string]any
		isError  bool
		contain  []string // in the result text
		wantFile string   // content of f afterwards ("" = unchanged)
	}{
		{name: "unique",
			input:    map[string]any{"old_string": "func a() {\n\treturn 1", "new_string": "func a() {\n\treturn 2"},
			contain:  []string{"has been updated", "     2\t\treturn 2", "     6\t\treturn 1"},
			wantFile: strings.Replace(src, "return 1", "return 2", 1)},
		{name: "ambiguous",
			input:   map[string]any{"old_string": "return 1", "new_string": "return 2"},
			isError: true, contain: []string{"occurs 2 times", "replace_all"}},
		{name: "replace all",
			input:    map[string]any{"old_string": "return 1", "new_string": "return 2", "replace_all": true},
			contain:  []string{"All 2 occurrences"},
			wantFile: strings.ReplaceAll(src, "return 1", "return 2")},
		{name: "replace all of a unique string",
			input:    map[string]any{"old_string": "func b", "new_string": "func c", "replace_all": true},
			contain:  []string{"All 1 occurrence of"},
			wantFile: strings.Replace(src, "func b", "func c", 1)},
		{name: "not found",
			input:   map[string]any{"old_string": "return 3", "new_string": "return 4"},
			isError: true, contain: []string{"old_string was not found", "Read the file"}},
		{name: "same strings",
			input:   map[string]any{"old_string": "return 1", "new_string": "return 1"},
			isError: true, contain: []string{"exactly the same"}},
		{name: "missing file",
			input:   map[string]any{"file_path": "missing.go", "old_string": "x", "new_string": "y"},
			isError: true, contain: []string{"File does not exist", "missing.go"}},
		{name: "create with empty old_string",
			input:   map[string]any{"file_path": "new/made.go", "old_string": "", "new_string": "package made\n"},
			contain: []string{"Created file", "made.go"}},
		{name: "empty old_string on existing file",
			input:   map[string]any{"old_string": "", "new_string": "x"},
			isError: true, contain: []string{"already exists"}},
		{name: "empty old_string fills an empty file",
			files:    map[string]string{"f.go": ""},
			input:    map[string]any{"old_string": "", "new_string": "hello\n"},
			wantFile: "hello\n"},
		{name: "crlf file keeps its line endings",
			files:    map[string]string{"f.go": "a\r\nb\r\nc\r\n"},
			input:    map[string]any{"old_string": "a\nb", "new_string": "A\nB"},
			wantFile: "A\r\nB\r\nc\r\n"},
		{name: "delete",
			input:    map[string]any{"old_string": "\nfunc b() {\n\treturn 1\n}\n", "new_string": ""},
			wantFile: "func a() {\n\treturn 1\n}\n"},
		{name: "directory",
			files:   map[string]string{"d/x": ""},
			input:   map[string]any{"file_path": "d", "old_string": "x", "new_string": "y"},
			isError: true, contain: []string{"is a directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := tc.files
			if files == nil {
				files = map[string]string{"f.go": src}
			}
			writeTree(t, dir, files)
			input := map[string]any{"file_path": filepath.Join(dir, "f.go")}
			for k, v := range tc.input {
				input[k] = v
			}
			res := call(t, Edit(Options{}), tool.Env{Cwd: dir}, input)
			got := text(res)
			if res.IsError != tc.isError {
				t.Fatalf("IsError = %v; text:\n%s", res.IsError, got)
			}
			for _, c := range tc.contain {
				if !strings.Contains(got, c) {
					t.Errorf("text does not contain %q:\n%s", c, got)
				}
			}
			if tc.wantFile != "" {
				if diff := cmp.Diff(tc.wantFile, readFile(t, filepath.Join(dir, "f.go"))); diff != "" {
					t.Errorf("file (-want +got):\n%s", diff)
				}
			}
			if tc.isError && files["f.go"] != "" {
				if got := readFile(t, filepath.Join(dir, "f.go")); got != files["f.go"] {
					t.Errorf("a failed edit changed the file to %q", got)
				}
			}
		})
	}
}

func TestEditCreatesWithParents(t *testing.T) {
	dir := t.TempDir()
	call(t, Edit(Options{}), tool.Env{Cwd: dir}, map[string]any{"file_path": "a/b/c.txt", "old_string": "", "new_string": "hi\n"})
	if got := readFile(t, filepath.Join(dir, "a/b/c.txt")); got != "hi\n" {
		t.Errorf("got %q", got)
	}
}

func TestEditPreservesMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(p, []byte("echo one\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o751); err != nil { // exact, whatever the umask
		t.Fatal(err)
	}
	res := call(t, Edit(Options{}), tool.Env{Cwd: dir}, map[string]any{"file_path": p, "old_string": "one", "new_string": "two"})
	if res.IsError {
		t.Fatal(text(res))
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o751 {
		t.Errorf("mode %v, want 0751", fi.Mode().Perm())
	}
	if got := readFile(t, p); got != "echo two\n" {
		t.Errorf("got %q", got)
	}
	original := "echo one\n"
	want := EditMeta{
		FilePath: p, OldString: "one", NewString: "two", Replacements: 1, OriginalFile: &original,
		StructuredPatch: []Hunk{{OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 1, Lines: []string{"-echo one", "+echo two"}}},
	}
	if diff := cmp.Diff(want, res.Meta); diff != "" {
		t.Errorf("meta (-want +got):\n%s", diff)
	}
}
