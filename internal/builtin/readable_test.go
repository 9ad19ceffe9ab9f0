package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/tool"
)

// readableTree is a workspace holding files a rule keeps out of sight
// (.env anywhere, secrets/), links to them and out of the workspace, and
// the Readable such rules give: it rejects those paths as named and
// where they really are.
func readableTree(t *testing.T) (ws string, env tool.Env) {
	t.Helper()
	root := t.TempDir()
	ws, outside := filepath.Join(root, "ws"), filepath.Join(root, "outside")
	writeTree(t, ws, map[string]string{
		".env":          "TOKEN=SECRET-DOTENV\n",
		"a/.env":        "TOKEN=SECRET-NESTED\n",
		"secrets/k.txt": "SECRET-KEY\n",
		"pub/a.txt":     "SECRET-FREE public text\n",
	})
	writeTree(t, outside, map[string]string{"o.txt": "SECRET-OUTSIDE\n"})
	for link, dest := range map[string]string{
		"alias":   filepath.Join(ws, "secrets"),    // a directory the rules hide
		"envlink": filepath.Join(ws, ".env"),       // a file the rules hide
		"out":     outside,                         // a directory out of the workspace
		"olink":   filepath.Join(outside, "o.txt"), // a file out of the workspace
	} {
		if err := os.Symlink(dest, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	hidden := func(path string) bool {
		return filepath.Base(path) == ".env" || within(filepath.Join(ws, "secrets"), path) || within(outside, path)
	}
	return ws, tool.Env{Cwd: ws, Readable: func(path string) bool { return !hidden(path) }}
}

func within(dir, path string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

func TestSearchesLeaveOutWhatReadableRejects(t *testing.T) {
	ws, env := readableTree(t)
	for _, tc := range []struct {
		name  string
		tool  tool.Tool
		input map[string]any
		want  []string // in the output
	}{
		{"grep content over the workspace", Grep(Options{}), map[string]any{"pattern": "SECRET", "output_mode": "content"}, []string{"SECRET-FREE"}},
		{"grep files over the workspace", Grep(Options{}), map[string]any{"pattern": "SECRET"}, []string{"pub/a.txt"}},
		{"grep count over the workspace", Grep(Options{}), map[string]any{"pattern": "SECRET", "output_mode": "count"}, []string{"pub/a.txt:1"}},
		{"grep through a linked directory", Grep(Options{}), map[string]any{"pattern": "SECRET", "path": "alias", "output_mode": "content"}, []string{"No matches found"}},
		{"glob everything", Glob(Options{}), map[string]any{"pattern": "**/*"}, []string{"pub/a.txt"}},
		{"glob dot files", Glob(Options{}), map[string]any{"pattern": "**/.env"}, []string{"No files found"}},
		{"ls the workspace", LS(Options{}), map[string]any{"path": ws}, []string{"pub/", "a.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := text(call(t, tc.tool, env, tc.input))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			for _, line := range strings.Split(got, "\n") {
				if strings.HasSuffix(strings.TrimSuffix(line, "/"), string(filepath.Separator)+"out") {
					t.Errorf("output lists the link out of the workspace: %q", line)
				}
			}
			for _, bad := range []string{".env", "SECRET-DOTENV", "SECRET-NESTED", "SECRET-KEY", "k.txt", "secrets", "SECRET-OUTSIDE", "o.txt", "alias", "olink", "envlink", "- out"} {
				if strings.Contains(got, bad) {
					t.Errorf("output shows %q:\n%s", bad, got)
				}
			}
		})
	}
	// Without a filter, the same calls show everything (but follow no
	// link); dot-files when named, as always.
	got := text(call(t, Grep(Options{}), tool.Env{Cwd: ws}, map[string]any{"pattern": "SECRET", "output_mode": "content", "glob": "{.env,*.txt}"}))
	if !strings.Contains(got, "SECRET-DOTENV") || strings.Contains(got, "SECRET-OUTSIDE") {
		t.Errorf("unfiltered grep:\n%s", got)
	}
}
