package contextfiles

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func paths(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

// world is a home with a user file, a repository with nested directories,
// and a secret outside the repository.
type world struct{ home, state, repo, sub, secret string }

func newWorld(t *testing.T) world {
	t.Helper()
	base := t.TempDir()
	w := world{home: filepath.Join(base, "home"), state: filepath.Join(base, "home", ".cadre"), repo: filepath.Join(base, "repo")}
	w.sub = filepath.Join(w.repo, "pkg", "inner")
	w.secret = filepath.Join(base, "secret.txt")
	write(t, w.secret, "SECRET-KEY-123")
	if err := os.MkdirAll(filepath.Join(w.repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(w.sub, 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w world) load(t *testing.T, cwd string) ([]File, []string) {
	t.Helper()
	return Load(Options{Cwd: cwd, Home: w.home, StateDir: w.state})
}

func TestOrderAndKinds(t *testing.T) {
	w := newWorld(t)
	write(t, filepath.Join(w.home, ".claude", "CLAUDE.md"), "user claude")
	write(t, filepath.Join(w.state, "AGENTS.md"), "user cadre")
	write(t, filepath.Join(w.repo, "CLAUDE.md"), "root claude\nSee @docs/style.md.\n")
	write(t, filepath.Join(w.repo, "docs", "style.md"), "style")
	write(t, filepath.Join(w.repo, ".claude", "CLAUDE.md"), "root dot-claude")
	write(t, filepath.Join(w.repo, "pkg", "AGENTS.md"), "pkg agents")
	write(t, filepath.Join(w.sub, "CLAUDE.local.md"), "inner local")
	files, warnings := w.load(t, w.sub)
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	want := []string{
		filepath.Join(w.state, "AGENTS.md"),
		filepath.Join(w.home, ".claude", "CLAUDE.md"),
		filepath.Join(w.repo, "CLAUDE.md"),
		filepath.Join(w.repo, "docs", "style.md"),
		filepath.Join(w.repo, ".claude", "CLAUDE.md"),
		filepath.Join(w.repo, "pkg", "AGENTS.md"),
		filepath.Join(w.sub, "CLAUDE.local.md"),
	}
	if got := paths(files); !slices.Equal(got, want) {
		t.Fatalf("files\n got %v\nwant %v", got, want)
	}
	kinds := []string{KindUser, KindUser, KindProject, KindProject, KindProject, KindProject, KindLocal}
	for i, f := range files {
		if f.Kind != kinds[i] {
			t.Errorf("%s: kind %s, want %s", f.Path, f.Kind, kinds[i])
		}
	}
	text := Render(files)
	for _, s := range []string{"user claude", "style", "inner local", "Contents of " + filepath.Join(w.repo, "CLAUDE.md")} {
		if !strings.Contains(text, s) {
			t.Errorf("rendered block lacks %q", s)
		}
	}
}

func TestOutsideARepositoryOnlyTheWorkingDirectory(t *testing.T) {
	base := t.TempDir()
	write(t, filepath.Join(base, "AGENTS.md"), "parent")
	cwd := filepath.Join(base, "proj")
	write(t, filepath.Join(cwd, "AGENTS.md"), "proj")
	files, _ := Load(Options{Cwd: cwd})
	if got := paths(files); !slices.Equal(got, []string{filepath.Join(cwd, "AGENTS.md")}) {
		t.Errorf("files %v: outside a repository, only the working directory's are read", got)
	}
}

func TestALinkedTwinCountsOnce(t *testing.T) {
	w := newWorld(t)
	write(t, filepath.Join(w.repo, "AGENTS.md"), "shared rules")
	if err := os.Symlink("AGENTS.md", filepath.Join(w.repo, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	files, _ := w.load(t, w.repo)
	if len(files) != 1 {
		t.Errorf("files %v, want the shared file once", paths(files))
	}
}

// The attacks: a repository's context file trying to pull in files from
// elsewhere on the machine.
func TestUntrustedContextFilesStayInside(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, w world)
	}{
		{"absolute import", func(t *testing.T, w world) {
			write(t, filepath.Join(w.repo, "CLAUDE.md"), "read @"+w.secret+"\n")
		}},
		{"parent import", func(t *testing.T, w world) {
			write(t, filepath.Join(w.repo, "CLAUDE.md"), "read @../secret.txt\n")
		}},
		{"home import from a project", func(t *testing.T, w world) {
			write(t, filepath.Join(w.home, "notes.txt"), "SECRET-KEY-123")
			write(t, filepath.Join(w.repo, "CLAUDE.md"), "read @~/notes.txt\n")
		}},
		{"context file is a link out", func(t *testing.T, w world) {
			if err := os.Symlink(w.secret, filepath.Join(w.repo, "CLAUDE.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"import through a linked directory", func(t *testing.T, w world) {
			if err := os.Symlink(filepath.Dir(w.secret), filepath.Join(w.repo, "up")); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(w.repo, "CLAUDE.md"), "read @up/secret.txt\n")
		}},
		{"imported file is a link out", func(t *testing.T, w world) {
			if err := os.Symlink(w.secret, filepath.Join(w.repo, "docs.md")); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(w.repo, "AGENTS.md"), "read @docs.md\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.setup(t, w)
			files, warnings := w.load(t, w.repo)
			if strings.Contains(Render(files), "SECRET-KEY-123") {
				t.Fatalf("the secret outside the workspace reached the context: %v", paths(files))
			}
			if len(warnings) == 0 || !strings.Contains(strings.Join(warnings, "\n"), "outside") {
				t.Errorf("warnings %v: want one saying the file is outside", warnings)
			}
		})
	}
}

func TestImportLoopAndDepth(t *testing.T) {
	w := newWorld(t)
	write(t, filepath.Join(w.repo, "CLAUDE.md"), "@a.md\n")
	write(t, filepath.Join(w.repo, "a.md"), "a @CLAUDE.md @b.md\n")
	write(t, filepath.Join(w.repo, "b.md"), "b @a.md\n")
	files, _ := w.load(t, w.repo)
	if len(files) != 3 {
		t.Errorf("a loop of imports: files %v, want each once", paths(files))
	}

	w = newWorld(t)
	write(t, filepath.Join(w.repo, "CLAUDE.md"), "@d1.md\n")
	for i := 1; i <= 8; i++ {
		write(t, filepath.Join(w.repo, "d"+string(rune('0'+i))+".md"), "level @d"+string(rune('0'+i+1))+".md\n")
	}
	files, warnings := w.load(t, w.repo)
	if len(files) != DefaultMaxDepth+1 {
		t.Errorf("a chain of 8 imports: %d files, want the file and %d levels", len(files), DefaultMaxDepth)
	}
	if !strings.Contains(strings.Join(warnings, "\n"), "nest at most") {
		t.Errorf("warnings %v: want the depth cap named", warnings)
	}
}

func TestSizeCaps(t *testing.T) {
	w := newWorld(t)
	write(t, filepath.Join(w.repo, "CLAUDE.md"), strings.Repeat("line of rules\n", 1000))
	write(t, filepath.Join(w.repo, "AGENTS.md"), "second")
	files, warnings := Load(Options{Cwd: w.repo, MaxFileBytes: 1000, MaxTotalBytes: 999})
	if len(files) != 1 || len(files[0].Content) > 1000 || !strings.HasSuffix(files[0].Content, "\n") {
		t.Fatalf("files %v: want the first cut to 1000 bytes on a line end, the second left out", paths(files))
	}
	all := strings.Join(warnings, "\n")
	if !strings.Contains(all, "only the start") || !strings.Contains(all, "later files are left out") {
		t.Errorf("warnings %v: want both caps named", warnings)
	}
}

func TestANamedPipeDoesNotHang(t *testing.T) {
	w := newWorld(t)
	if err := syscall.Mkfifo(filepath.Join(w.repo, "CLAUDE.md"), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	write(t, filepath.Join(w.repo, "AGENTS.md"), "@pipe.md\n")
	if err := syscall.Mkfifo(filepath.Join(w.repo, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, warnings := w.load(t, w.repo)
	if len(files) != 1 || len(warnings) != 2 {
		t.Errorf("files %v warnings %v: the pipe must be refused, the rest read", paths(files), warnings)
	}
}

func TestImports(t *testing.T) {
	text := "See @docs/a.md and @./b.md, then @~/c.md.\n" +
		"Ask @alice or mail bob@example.com; see https://x.io/@y.\n" +
		"Inline `@code/span.md` is not one.\n" +
		"```\n@fenced/file.md\n```\n" +
		"@/abs/d.md\n"
	got := Imports(text)
	want := []string{"docs/a.md", "./b.md", "~/c.md", "/abs/d.md"}
	if !slices.Equal(got, want) {
		t.Errorf("Imports = %v, want %v", got, want)
	}
}

// TestSE4ForSubagent: AGENTS.md and TOOLS.md, with their imports, are the
// files every subagent gets; the CLAUDE.md family only when asked for. An
// AGENTS.md that is a link to CLAUDE.md is read once and still counts as
// an AGENTS.md, its imports too.
func TestSE4ForSubagent(t *testing.T) {
	t.Run("separate files", func(t *testing.T) {
		repo := t.TempDir()
		write(t, filepath.Join(repo, "CLAUDE.md"), "claude @claude-more.md\n")
		write(t, filepath.Join(repo, "claude-more.md"), "claude more\n")
		write(t, filepath.Join(repo, "AGENTS.md"), "agents @agents-more.md\n")
		write(t, filepath.Join(repo, "agents-more.md"), "agents more\n")
		write(t, filepath.Join(repo, "TOOLS.md"), "tools\n")
		write(t, filepath.Join(repo, "CLAUDE.local.md"), "local\n")
		files, warnings := Load(Options{Cwd: repo, Root: repo})
		if len(warnings) > 0 {
			t.Fatal(warnings)
		}
		all := []string{"CLAUDE.md", "claude-more.md", "AGENTS.md", "agents-more.md", "TOOLS.md", "CLAUDE.local.md"}
		for _, tt := range []struct {
			claude bool
			want   []string
		}{{true, all}, {false, []string{"AGENTS.md", "agents-more.md", "TOOLS.md"}}} {
			var got []string
			for _, p := range paths(ForSubagent(files, tt.claude)) {
				got = append(got, filepath.Base(p))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ForSubagent(claude %v) = %v, want %v", tt.claude, got, tt.want)
			}
		}
	})
	t.Run("AGENTS.md linked to CLAUDE.md", func(t *testing.T) {
		repo := t.TempDir()
		write(t, filepath.Join(repo, "CLAUDE.md"), "shared @more.md\n")
		write(t, filepath.Join(repo, "more.md"), "more\n")
		if err := os.Symlink("CLAUDE.md", filepath.Join(repo, "AGENTS.md")); err != nil {
			t.Fatal(err)
		}
		files, _ := Load(Options{Cwd: repo, Root: repo})
		var got []string
		for _, p := range paths(ForSubagent(files, false)) {
			got = append(got, filepath.Base(p))
		}
		if want := []string{"CLAUDE.md", "more.md"}; !slices.Equal(got, want) || len(files) != 2 {
			t.Errorf("ForSubagent = %v of %d files, want %v of 2", got, len(files), want)
		}
	})
}
