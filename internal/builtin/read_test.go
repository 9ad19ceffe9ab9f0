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

// numbered renders lines from..to of "line N" files as Read shows them.
func numbered(from, to int) string {
	var lines []string
	for i := from; i <= to; i++ {
		lines = append(lines, fmt.Sprintf("%6d\tline %d", i, i))
	}
	return strings.Join(lines, "\n")
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	var ten strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&ten, "line %d\n", i)
	}
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	writeTree(t, dir, map[string]string{
		"ten.txt":      ten.String(),
		"noeol.txt":    "a\nb",
		"crlf.txt":     "a\r\nb\r\n",
		"empty.txt":    "",
		"long.txt":     strings.Repeat("x", 30) + "\nshort\n",
		"pic.png":      string(png),
		"pic.dat":      string(png),
		"photo.JPG":    "not really a jpeg, but named like one",
		"blob.bin":     "abc\x00def",
		"doc.pdf":      "%PDF-1.7\n...",
		"sub/note.txt": "hi\n",
	})
	o := Options{ReadLineMaxChars: 10, ReadLineLimit: 5}
	env := tool.Env{Cwd: dir}
	tests := []struct {
		name    string
		input   map[string]any
		want    string // exact text, unless contains is set
		contain []string
		isError bool
	}{
		{name: "default limit", input: map[string]any{"file_path": "ten.txt"},
			want: numbered(1, 5) + "\n\n(Showing lines 1-5 of 10. Use offset=6 to read more.)"},
		{name: "offset and limit", input: map[string]any{"file_path": filepath.Join(dir, "ten.txt"), "offset": 3, "limit": 2},
			want: numbered(3, 4) + "\n\n(Showing lines 3-4 of 10. Use offset=5 to read more.)"},
		{name: "to the end", input: map[string]any{"file_path": "ten.txt", "offset": 8},
			want: numbered(8, 10)},
		{name: "offset past end", input: map[string]any{"file_path": "ten.txt", "offset": 11},
			contain: []string{"has only 10 lines", "offset 11"}},
		{name: "no final newline", input: map[string]any{"file_path": "noeol.txt"},
			want: "     1\ta\n     2\tb"},
		{name: "crlf", input: map[string]any{"file_path": "crlf.txt"},
			want: "     1\ta\n     2\tb"},
		{name: "long line", input: map[string]any{"file_path": "long.txt"},
			want: "     1\txxxxxxxxxx… [20 characters truncated]\n     2\tshort"},
		{name: "empty", input: map[string]any{"file_path": "empty.txt"},
			contain: []string{"exists but is empty"}},
		{name: "subdir", input: map[string]any{"file_path": "sub/note.txt"}, want: "     1\thi"},
		{name: "missing", input: map[string]any{"file_path": "nope.txt"}, isError: true,
			contain: []string{"File does not exist", filepath.Join(dir, "nope.txt")}},
		{name: "directory", input: map[string]any{"file_path": "sub"}, isError: true,
			contain: []string{"is a directory", "use LS"}},
		{name: "image by extension", input: map[string]any{"file_path": "pic.png"}, isError: true,
			contain: []string{"Read cannot show images: pic.png is image/png"}},
		{name: "image by extension, any case", input: map[string]any{"file_path": "photo.JPG"}, isError: true,
			contain: []string{"cannot show images", "image/jpeg"}},
		{name: "image by content", input: map[string]any{"file_path": "pic.dat"}, isError: true,
			contain: []string{"Read cannot show images: pic.dat is image/png"}},
		{name: "binary", input: map[string]any{"file_path": "blob.bin"}, isError: true,
			contain: []string{"cannot show binary files", "blob.bin"}},
		{name: "pdf", input: map[string]any{"file_path": "doc.pdf"}, isError: true,
			contain: []string{"cannot show binary files", "application/pdf"}},
		{name: "negative offset", input: map[string]any{"file_path": "ten.txt", "offset": -1}, isError: true,
			contain: []string{"must not be negative"}},
		{name: "empty path", input: map[string]any{"file_path": ""}, isError: true,
			contain: []string{"file_path is empty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, Read(o), env, tc.input)
			got := text(res)
			if res.IsError != tc.isError {
				t.Fatalf("IsError = %v, want %v; text:\n%s", res.IsError, tc.isError, got)
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

func TestReadMeta(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"f.txt": "a\nb\nc\nd\n"})
	res := call(t, Read(Options{}), tool.Env{Cwd: dir}, map[string]any{"file_path": "f.txt", "offset": 2, "limit": 2})
	want := ReadMeta{Type: "text", File: ReadFileMeta{
		FilePath: filepath.Join(dir, "f.txt"), Content: "b\nc\n", NumLines: 2, StartLine: 2, TotalLines: 4,
	}}
	if diff := cmp.Diff(want, res.Meta); diff != "" {
		t.Errorf("meta (-want +got):\n%s", diff)
	}
}

// A file bigger than ReadMaxBytes is shown up to the cap, with a way on.
func TestReadByteCap(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	writeTree(t, dir, map[string]string{"f.txt": b.String()})
	// Each shown line is 6+1+len("line NN")+1 = 15 bytes.
	res := call(t, Read(Options{ReadMaxBytes: 150}), tool.Env{Cwd: dir}, map[string]any{"file_path": "f.txt"})
	got := text(res)
	want := numbered(1, 10) + "\n\n(Showing lines 1-10 of 100; output capped at 150 bytes. Use offset=11 to read more.)"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}

// A single enormous line costs only the kept prefix.
func TestReadHugeLine(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"min.js": strings.Repeat("é", 200_000) + "\nend\n"})
	res := call(t, Read(Options{}), tool.Env{Cwd: dir}, map[string]any{"file_path": "min.js"})
	got := text(res)
	want := "     1\t" + strings.Repeat("é", 2000) + "… [198000 characters truncated]\n     2\tend"
	if got != want {
		t.Errorf("got %d bytes, starting %q…, ending …%q", len(got), got[:20], got[len(got)-60:])
	}
}

func TestReadHomeExpansion(t *testing.T) {
	home := t.TempDir()
	writeTree(t, home, map[string]string{"notes.txt": "remember\n"})
	res := call(t, Read(Options{HomeDir: home}), tool.Env{Cwd: t.TempDir()}, map[string]any{"file_path": "~/notes.txt"})
	if got := text(res); got != "     1\tremember" {
		t.Errorf("got %q", got)
	}
}

func TestReadPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"secret": "x"})
	if err := os.Chmod(filepath.Join(dir, "secret"), 0); err != nil {
		t.Fatal(err)
	}
	res := call(t, Read(Options{}), tool.Env{Cwd: dir}, map[string]any{"file_path": "secret"})
	if !res.IsError || !strings.Contains(text(res), "Permission denied") {
		t.Errorf("got %v %q", res.IsError, text(res))
	}
}

func TestReadRefusesSpecialFiles(t *testing.T) {
	res := call(t, Read(Options{}), tool.Env{Cwd: t.TempDir()}, map[string]any{"file_path": "/dev/zero"})
	if !res.IsError || !strings.Contains(text(res), "not a regular file") {
		t.Errorf("got %v %q", res.IsError, text(res))
	}
}
