package mention

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// workspace is a project beside a directory outside it that holds a
// secret, with links from inside to both.
func workspace(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "project"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "internal", "tui"), filepath.Join(root, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(root, "main.go"):                 "package main\n\nfunc main() {}\n",
		filepath.Join(root, "internal", "tui", "a.go"): "package tui\n",
		filepath.Join(root, "blob.bin"):                "\x00\x01\x02",
		filepath.Join(root, ".env"):                    "X=1\n",
		filepath.Join(outside, "secret.txt"):           "SECRET\n",
	}
	for p, text := range files {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("x", MaxSize+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		filepath.Join(root, "secret-link.txt"): filepath.Join(outside, "secret.txt"),
		filepath.Join(root, "out"):             outside,
		filepath.Join(root, "main-link.go"):    "main.go",
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

// The attack: every way out of the workspace is refused with ErrOutside
// and reads nothing.
func TestReadRefusesPathsOutOfTheWorkspace(t *testing.T) {
	root, outside := workspace(t)
	for _, name := range []string{
		"../../etc/passwd",
		"../outside/secret.txt",
		"internal/../../outside/secret.txt",
		filepath.Join(outside, "secret.txt"),
		"/etc/passwd",
		"secret-link.txt", // a link to a file outside
		"out/secret.txt",  // a path through a link to a directory outside
	} {
		f, err := Read(root, name)
		if !errors.Is(err, ErrOutside) {
			t.Errorf("Read(%q) = %q, %v; want ErrOutside", name, f.Content, err)
		}
		if strings.Contains(f.Content, "SECRET") {
			t.Errorf("Read(%q) leaked the secret", name)
		}
	}
}

func TestRead(t *testing.T) {
	root, _ := workspace(t)
	for _, tc := range []struct {
		name, path, content string
		lines               int
		err                 string
	}{
		{name: "main.go", path: "main.go", content: "package main\n\nfunc main() {}", lines: 3},
		{name: "./internal/tui/a.go", path: "internal/tui/a.go", content: "package tui", lines: 1},
		{name: filepath.Join(root, "main.go"), path: "main.go", content: "package main\n\nfunc main() {}", lines: 3},
		{name: "main-link.go", path: "main-link.go", content: "package main\n\nfunc main() {}", lines: 3},
		{name: "missing.go", err: "no such file in the workspace"},
		{name: "internal", err: "is a directory"},
		{name: "blob.bin", err: "is not a text file"},
		{name: "big.txt", err: "files up to 256 KiB"},
	} {
		f, err := Read(root, tc.name)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Read(%q): %v, want an error with %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || f.Path != tc.path || f.Content != tc.content || f.Lines != tc.lines {
			t.Errorf("Read(%q) = %+v, %v; want %s with %d lines", tc.name, f, err, tc.path, tc.lines)
		}
	}
	if _, err := Read(root, "missing.go"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestTokens(t *testing.T) {
	got := Tokens("@main.go: why does it differ from @internal/tui/a.go? mail me@example.com, see @main.go.")
	if want := []string{"main.go", "internal/tui/a.go"}; !slices.Equal(got, want) {
		t.Errorf("Tokens = %q, want %q", got, want)
	}
}

func TestBlockNamesTheFile(t *testing.T) {
	b := Block(File{Mention: "main.go", Path: "main.go", Content: "package main", Lines: 1})
	for _, want := range []string{"@main.go", `<file path="main.go">`, "package main", "(1 lines)"} {
		if !strings.Contains(b, want) {
			t.Errorf("the attachment lacks %q:\n%s", want, b)
		}
	}
}

func TestComplete(t *testing.T) {
	root, _ := workspace(t)
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"ma", []string{"main-link.go", "main.go"}},
		{"int", []string{"internal/"}},
		{"internal/t", []string{"internal/tui/"}},
		{"internal/tui/", []string{"internal/tui/a.go"}},
		{".e", []string{".env"}},
		{"../", nil},
		{"../outside/", nil},
	} {
		if got := Complete(root, tc.prefix, 10); !slices.Equal(got, tc.want) {
			t.Errorf("Complete(%q) = %q, want %q", tc.prefix, got, tc.want)
		}
	}
	if got := Complete(root, "", 10); slices.Contains(got, ".env") || !slices.Contains(got, "main.go") {
		t.Errorf("Complete(\"\") = %q: want visible files, no hidden ones", got)
	}
}
