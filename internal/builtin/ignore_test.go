package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/tool"
	"github.com/google/go-cmp/cmp"
)

// ignoreFixture is a repository with every kind of ignore rule; each file
// holds "needle".
var ignoreFixture = map[string]string{
	".git/HEAD":                "ref: refs/heads/main\n",
	".git/info/exclude":        "# local\nexcluded.txt\n",
	".gitignore":               "node_modules/\n*.log\n/build/\nsecret*\n!secret-ok.txt\n\\#hash.txt\n",
	".ignore":                  "vendor/\n",
	".env":                     "needle",
	".github/ci.yml":           "needle",
	"#hash.txt":                "needle",
	"main.go":                  "needle",
	"debug.log":                "needle",
	"excluded.txt":             "needle",
	"secret.txt":               "needle",
	"secret-ok.txt":            "needle",
	"build/out.go":             "needle",
	"src/build/keep.go":        "needle",
	"src/main.go":              "needle",
	"src/.gitignore":           "gen/\n",
	"src/gen/x.go":             "needle",
	"src/app.log":              "needle",
	"src/.hidden/h.go":         "needle",
	"node_modules/m/index.js":  "needle",
	"vendor/v.go":              "needle",
	"docs/.ignore":             "!*.log\n",
	"docs/keep.log":            "needle",
	"docs/guide.md":            "needle",
	"other/.gitignore":         "*\n",
	"other/all-ignored.go":     "needle",
	"src/gen/.gitignore":       "!x.go\n",
	"src/gen/deeper/y.go":      "needle",
	"lib/.ignore":              "*.go\n!keep.go\n",
	"lib/drop.go":              "needle",
	"lib/keep.go":              "needle",
	"lib/sub/also-dropped.go":  "needle",
	"lib/sub/readme.txt":       "needle",
	"lib/sub/.gitignore":       "readme.txt\n",
	"lib/sub/nested/kept.txt":  "needle",
	"lib/sub/nested/.ignore":   "",
	"lib/sub/nested/other.log": "needle",
}

// shownByDefault is what a walk of the whole fixture shows.
var shownByDefault = []string{
	"docs/guide.md", "docs/keep.log", "lib/keep.go", "lib/sub/nested/kept.txt",
	"main.go", "secret-ok.txt", "src/build/keep.go", "src/main.go",
}

// sortedLines returns the lines of a tool's text made relative to dir,
// sorted, leaving out lines that are not paths below dir.
func sortedLines(dir, s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l, _, _ = strings.Cut(l, ":")
		if rel, err := filepath.Rel(dir, l); err == nil && filepath.IsAbs(l) && !strings.HasPrefix(rel, "..") {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	slices.Sort(out)
	return out
}

func TestSearchesHonourIgnoreFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, ignoreFixture)
	tests := []struct {
		name  string
		tool  tool.Tool
		input map[string]any
		want  []string
	}{
		{"glob all", Glob(Options{}), map[string]any{"pattern": "**/*"}, shownByDefault},
		{"grep all", Grep(Options{}), map[string]any{"pattern": "needle"}, shownByDefault},
		{"grep content", Grep(Options{}), map[string]any{"pattern": "needle", "output_mode": "content"}, shownByDefault},
		{"glob hidden not named", Glob(Options{}), map[string]any{"pattern": "**/*.yml"}, nil},
		{"glob hidden dir named", Glob(Options{}), map[string]any{"pattern": "**/.github/*.yml"}, []string{".github/ci.yml"}},
		{"glob hidden file named", Glob(Options{}), map[string]any{"pattern": "**/.env"}, []string{".env"}},
		{"glob dot star", Glob(Options{}), map[string]any{"pattern": ".*"}, []string{".env", ".gitignore", ".ignore"}},
		{"glob hidden nested named", Glob(Options{}), map[string]any{"pattern": "src/.hidden/*.go"}, []string{"src/.hidden/h.go"}},
		{"glob ignored dir named by path", Glob(Options{}), map[string]any{"pattern": "**/*.js", "path": "node_modules"}, []string{"node_modules/m/index.js"}},
		{"glob ignored dir named by pattern", Glob(Options{}), map[string]any{"pattern": "build/*.go"}, []string{"build/out.go"}},
		{"glob under nested rules", Glob(Options{}), map[string]any{"pattern": "*.go", "path": "lib"}, []string{"lib/keep.go"}},
		{"glob sub of repo keeps parent rules", Glob(Options{}), map[string]any{"pattern": "**/*", "path": "src"}, []string{"src/build/keep.go", "src/main.go"}},
		{"glob git never walked", Glob(Options{}), map[string]any{"pattern": "**/HEAD"}, nil},
		{"grep hidden named by glob", Grep(Options{}), map[string]any{"pattern": "needle", "glob": ".github/*.yml"}, []string{".github/ci.yml"}},
		{"grep hidden not named", Grep(Options{}), map[string]any{"pattern": "needle", "glob": "*.yml"}, nil},
		{"grep file named outright", Grep(Options{}), map[string]any{"pattern": "needle", "path": "debug.log"}, []string{"debug.log"}},
		{"grep ignored dir named", Grep(Options{}), map[string]any{"pattern": "needle", "path": "src/gen"}, []string{"src/gen/deeper/y.go", "src/gen/x.go"}},
		{"grep hidden dir named", Grep(Options{}), map[string]any{"pattern": "needle", "path": ".github"}, []string{".github/ci.yml"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, tc.tool, tool.Env{Cwd: dir}, tc.input)
			if res.IsError {
				t.Fatalf("error: %s", text(res))
			}
			if diff := cmp.Diff(tc.want, sortedLines(dir, text(res))); diff != "" {
				t.Errorf("files (-want +got):\n%s\ntext:\n%s", diff, text(res))
			}
		})
	}
}

func TestLSHonoursIgnoreFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, ignoreFixture)
	tests := []struct {
		name, path, want string
	}{
		{"repository", ".", `- DIR/
  - docs/
    - guide.md
    - keep.log
  - lib/
    - keep.go
    - sub/
      - nested/
        - kept.txt
  - main.go
  - other/
  - secret-ok.txt
  - src/
    - build/
      - keep.go
    - main.go
(26 hidden or ignored not listed: dot-files and what .gitignore and .ignore files exclude; LS such a directory by its path to list it)`},
		{"hidden dir named", ".github", `- DIR/.github/
  - ci.yml`},
		{"ignored dir named", "node_modules", `- DIR/node_modules/
  - m/
    - index.js`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, LS(Options{}), tool.Env{Cwd: dir}, map[string]any{"path": tc.path})
			if res.IsError {
				t.Fatalf("error: %s", text(res))
			}
			got := strings.ReplaceAll(text(res), dir, "DIR")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("listing (-want +got):\n%s", diff)
			}
		})
	}
}

// Outside a git repository .gitignore means nothing (as in ripgrep);
// .ignore still holds.
func TestIgnoreOutsideRepository(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".gitignore":  "*.log\n",
		".ignore":     "vendor/\n",
		"a.log":       "",
		"a.go":        "",
		"vendor/v.go": "",
		"sub/b.go":    "",
	})
	res := call(t, Glob(Options{}), tool.Env{Cwd: dir}, map[string]any{"pattern": "**/*"})
	if diff := cmp.Diff([]string{"a.go", "a.log", "sub/b.go"}, sortedLines(dir, text(res))); diff != "" {
		t.Errorf("glob (-want +got):\n%s", diff)
	}
	// A search of a folder keeps the working directory's .ignore.
	res = call(t, Glob(Options{}), tool.Env{Cwd: dir}, map[string]any{"pattern": "**/*.go", "path": "."})
	if diff := cmp.Diff([]string{"a.go", "sub/b.go"}, sortedLines(dir, text(res))); diff != "" {
		t.Errorf("glob (-want +got):\n%s", diff)
	}
}

// A hostile repository's ignore files cannot make a search read outside
// it, block, or run for long.
func TestIgnoreFilesFromHostileRepository(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{
		"rules":               "*\n",
		"gitdir/info/exclude": "*\n",
	})
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"gitignore is a link out", func(t *testing.T, dir string) {
			symlink(t, filepath.Join(outside, "rules"), filepath.Join(dir, ".gitignore"))
		}},
		{"ignore is a link out", func(t *testing.T, dir string) {
			symlink(t, filepath.Join(outside, "rules"), filepath.Join(dir, ".ignore"))
		}},
		{"gitignore is a FIFO", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, ".gitignore"), 0o644); err != nil {
				t.Skipf("SKIPPED, NOT TESTED: no FIFO here: %v", err)
			}
		}},
		{"gitignore is a link to a device", func(t *testing.T, dir string) {
			symlink(t, "/dev/zero", filepath.Join(dir, ".gitignore"))
		}},
		{"git file points out", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
				t.Fatal(err)
			}
			writeTree(t, dir, map[string]string{".git": "gitdir: " + filepath.Join(outside, "gitdir") + "\n"})
		}},
		{"info is a link out", func(t *testing.T, dir string) {
			symlink(t, filepath.Join(outside, "gitdir", "info"), filepath.Join(dir, ".git", "info"))
		}},
		{"patterns climb out", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{".gitignore": "*\n!../\n!/../**\n!" + outside + "/**\n"})
		}},
		{"rules past the size cap", func(t *testing.T, dir string) {
			big := strings.Repeat("# padding padding padding padding padding padding padding\n", 2*ignoreRulesMax/58) + "*\n"
			writeTree(t, dir, map[string]string{".gitignore": big})
		}},
		{"lines past the length cap", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{".gitignore": strings.Repeat("x", ignoreLineMax) + "\n*" + strings.Repeat("/", ignoreLineMax) + "\n"})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{".git/HEAD": "", "a.go": "needle", "sub/b.go": "needle"})
			tc.setup(t, dir)
			want := []string{"a.go", "sub/b.go"}
			if tc.name == "patterns climb out" {
				want = nil // "*" holds; nothing outside shows
			}
			for _, tl := range []tool.Tool{Glob(Options{}), Grep(Options{})} {
				input := map[string]any{"pattern": "**/*"}
				if tl.Info().Name == "Grep" {
					input = map[string]any{"pattern": "needle"}
				}
				res := callWithin(t, 20*time.Second, tl, tool.Env{Cwd: dir}, input)
				if diff := cmp.Diff(want, sortedLines(dir, text(res))); diff != "" {
					t.Errorf("%s (-want +got):\n%s\ntext:\n%s", tl.Info().Name, diff, text(res))
				}
			}
		})
	}
}

// Pathological patterns cost at most what the cap on the patterns in
// effect allows: files four times the cap, of slow lines, in the root and
// in subdirectories, on a tree of 2,000 files end well inside the
// deadline.
func TestIgnorePathologicalPatternsAreBounded(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{".git/HEAD": ""}
	name := strings.Repeat("a", 200) + ".go"
	for i := range 2000 {
		files[filepath.Join("d"+string(rune('a'+i%20)), strings.Repeat("b", i%7+1), string(rune('a'+i/100))+name)] = ""
	}
	writeTree(t, dir, files)
	line := strings.Repeat("*a", ignoreLineMax/2-1) + "b\n"
	var rules strings.Builder
	for rules.Len() < 4*ignoreRulesMax {
		rules.WriteString(line)
	}
	// Nested copies add nothing: the cap holds for a directory's
	// patterns and its parents' together.
	for _, d := range []string{".", "da", "db", "dc", "dd"} {
		writeTree(t, dir, map[string]string{filepath.Join(d, ".gitignore"): rules.String()})
	}
	res := callWithin(t, 60*time.Second, Glob(Options{GlobMaxResults: 5000}), tool.Env{Cwd: dir}, map[string]any{"pattern": "**/*.go"})
	if got := len(sortedLines(dir, text(res))); got != 2000 {
		t.Errorf("found %d files, want 2000", got)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := newTreeFilter(tool.Env{Cwd: dir}, real, nil)
	f.enter(filepath.Join(real, "da"), "da")
	for rel, l := range f.layers {
		if n := l.count(); l.size > ignoreRulesMax || n > ignoreRulesMax/len(line)+1 {
			t.Errorf("layer %q holds %d patterns, %d bytes; the cap is %d bytes", rel, n, l.size, ignoreRulesMax)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// callWithin runs a call that must finish within d: a search that hangs
// fails the test instead of blocking it.
func callWithin(t *testing.T, d time.Duration, tl tool.Tool, env tool.Env, input map[string]any) tool.Result {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	type out struct {
		res tool.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := tl.Call(ctx, env, raw)
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("%s: %v", tl.Info().Name, o.err)
		}
		return o.res
	case <-time.After(d + 5*time.Second):
		t.Fatalf("%s did not return within %v", tl.Info().Name, d)
		return tool.Result{}
	}
}

// A deep tree of ignore files holds each pattern once: a layer keeps its
// own patterns and points at its parent's, so memory grows with what the
// files hold, not with that times their depth.
func TestIgnoreLayersShareTheirParents(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{".git/HEAD": ""}
	rel := ""
	for i := range 50 {
		rel = filepath.Join(rel, fmt.Sprintf("d%d", i))
		files[filepath.Join(rel, ".gitignore")] = strings.Repeat(fmt.Sprintf("pattern%d\n", i), 10)
	}
	writeTree(t, dir, files)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := newTreeFilter(tool.Env{Cwd: dir}, real, nil)
	rel = ""
	for i := range 50 {
		rel = path.Join(rel, fmt.Sprintf("d%d", i))
		f.enter(filepath.Join(real, filepath.FromSlash(rel)), rel)
	}
	held := 0
	for at := f.layers[rel]; at != nil; at = at.parent {
		held += len(at.ignore) + len(at.git)
	}
	if want := 500; held != want || f.layers[rel].count() != want {
		t.Errorf("the deepest layer holds %d patterns (count %d), want %d", held, f.layers[rel].count(), want)
	}
	if ignored, _ := f.layers[rel].decide(strings.Split(rel+"/pattern0", "/"), false); !ignored {
		t.Error("the top directory's pattern does not hold at the bottom")
	}
}

// FuzzIgnoreFiles: whatever a repository's .gitignore and .ignore hold,
// a search neither panics nor shows a path outside its root, and the
// patterns in effect stay under the cap.
func FuzzIgnoreFiles(f *testing.F) {
	for _, seed := range [][2]string{
		{"*.log\n!keep.log\n", "vendor/\n"},
		{"/build/\n\\#x\n\\!y\n", ""},
		{"**/a/**/b\n", "!**\n"},
		{"!\n/\n//\n***\n[\n[!]\n\\\n", "a/**/\n"},
		{strings.Repeat("*a", 600) + "\n", "\r\n\r\n#\n"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, gitignore, ignore string) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{
			".git/HEAD": "", ".gitignore": gitignore, ".ignore": ignore,
			"a/b/c.go": "needle", "a/keep.log": "needle", "build/x": "needle", "vendor/v.go": "needle",
			"a/.gitignore": gitignore,
		})
		for _, tl := range []tool.Tool{Glob(Options{}), Grep(Options{}), LS(Options{})} {
			input := map[string]any{"pattern": "**/*"}
			switch tl.Info().Name {
			case "Grep":
				input = map[string]any{"pattern": "needle"}
			case "LS":
				input = map[string]any{"path": dir}
			}
			raw, _ := json.Marshal(input)
			res, err := tl.Call(context.Background(), tool.Env{Cwd: dir}, raw)
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %s", tl.Info().Name, err, text(res))
			}
			if tl.Info().Name == "LS" {
				continue
			}
			for _, l := range strings.Split(text(res), "\n") {
				if filepath.IsAbs(l) && !strings.HasPrefix(l, dir+string(filepath.Separator)) {
					t.Errorf("%s shows %q, outside %s", tl.Info().Name, l, dir)
				}
			}
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			t.Fatal(err)
		}
		filter := newTreeFilter(tool.Env{Cwd: dir}, real, nil)
		filter.enter(filepath.Join(real, "a"), "a")
		if l := filter.layers["a"]; l != nil && l.size > ignoreRulesMax {
			t.Errorf("layer holds %d bytes of patterns", l.size)
		}
	})
}
