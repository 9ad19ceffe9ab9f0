package builtin

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/cadre-dev/cadre/tool"
)

//go:embed glob.md
var globDescription string

// GlobInput is Glob's input, as Claude Code names it.
type GlobInput struct {
	Pattern string `json:"pattern" jsonschema:"The glob pattern to match files against"`
	Path    string `json:"path,omitempty" jsonschema:"The directory to search in. If not specified, the current working directory will be used. IMPORTANT: Omit this field to use the default directory. DO NOT enter \"undefined\" or \"null\" - simply omit it for the default behavior. Must be a valid directory path if provided."`
}

// GlobMeta is the Meta of a Glob result.
type GlobMeta struct {
	Filenames  []string `json:"filenames"`
	NumFiles   int      `json:"numFiles"`
	Truncated  bool     `json:"truncated"`
	DurationMs int64    `json:"durationMs"`
}

// Glob returns the Glob tool.
func Glob(opts Options) tool.Tool {
	o := opts.withDefaults()
	t := tool.New(tool.Info{
		Name:            "Glob",
		Description:     describe("Glob", globDescription, o),
		InputSchema:     schema("glob"),
		Access:          tool.AccessRead,
		ConcurrencySafe: true,
	}, func(ctx context.Context, env tool.Env, in GlobInput) (tool.Result, error) {
		return runGlob(ctx, o, env, in)
	})
	t.TargetOf = func(env tool.Env, in GlobInput) string {
		root, _ := globRoot(o, env, in)
		return root
	}
	return t
}

// globRoot splits a Glob call into the directory to walk and the pattern
// to match below it: the pattern's fixed leading directories join the
// search path (an absolute pattern replaces it).
func globRoot(o Options, env tool.Env, in GlobInput) (root, pattern string) {
	base, pattern := doublestar.SplitPattern(filepath.ToSlash(in.Pattern))
	if filepath.IsAbs(base) {
		return filepath.Clean(base), pattern
	}
	return resolve(o, env, filepath.Join(in.Path, base)), pattern
}

type globMatch struct {
	path  string
	mtime time.Time
}

func runGlob(ctx context.Context, o Options, env tool.Env, in GlobInput) (tool.Result, error) {
	began := time.Now()
	if in.Pattern == "" {
		return tool.Errorf(`pattern is empty: give a glob pattern such as "**/*.go".`), nil
	}
	root, pattern := globRoot(o, env, in)
	if !doublestar.ValidatePattern(pattern) {
		return tool.Errorf("Invalid glob pattern %q: check its brackets and braces.", in.Pattern), nil
	}
	if res, ok := checkDir(root); !ok {
		return res, nil
	}
	prune := newGlobPruner(pattern)

	var found []globMatch
	err := walkIgnoring(ctx, env, root, namesHidden(pattern), func(p, real, rel string, d fs.DirEntry) error {
		if d.IsDir() {
			if !prune.mayContain(rel) || !shown(env, p, real, d) {
				return fs.SkipDir
			}
			return nil
		}
		if !doublestar.MatchUnvalidated(pattern, rel) || !shown(env, p, real, d) {
			return nil
		}
		var mtime time.Time
		if fi, err := d.Info(); err == nil {
			mtime = fi.ModTime()
		}
		found = append(found, globMatch{p, mtime})
		return nil
	})
	switch {
	case ctx.Err() != nil:
		return tool.Result{}, cancelled(ctx, "Glob")
	case err != nil:
		return fsFailure("search", root, err)
	}

	slices.SortFunc(found, func(a, b globMatch) int {
		return cmp.Or(b.mtime.Compare(a.mtime), strings.Compare(a.path, b.path))
	})
	meta := GlobMeta{NumFiles: len(found)}
	if len(found) > o.GlobMaxResults {
		found, meta.Truncated = found[:o.GlobMaxResults], true
	}
	for _, m := range found {
		meta.Filenames = append(meta.Filenames, m.path)
	}
	meta.DurationMs = time.Since(began).Milliseconds()
	if len(found) == 0 {
		return tool.Result{Content: tool.Text("No files found").Content, Meta: meta}, nil
	}
	text := strings.Join(meta.Filenames, "\n")
	if meta.Truncated {
		text += fmt.Sprintf("\n(Results are truncated: showing the %d most recently modified of %d files. Consider using a more specific path or pattern.)", o.GlobMaxResults, meta.NumFiles)
	}
	return tool.Result{Content: tool.Text(text).Content, Meta: meta}, nil
}

// checkDir explains, as an error result, why root cannot be searched.
func checkDir(root string) (tool.Result, bool) {
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tool.Errorf("Directory does not exist: %s.", root), false
	case err != nil:
		return tool.Errorf("Cannot search %s: %v.", root, err), false
	case !fi.IsDir():
		return tool.Errorf("%s is not a directory; give a directory to search in (use Read to read a file).", root), false
	}
	return tool.Result{}, true
}

// globPruner decides which directories can hold a match, so that a pattern
// like "src/*.go" does not walk the whole tree.
type globPruner struct {
	segs []string // nil: cannot prune
}

func newGlobPruner(pattern string) globPruner {
	if strings.ContainsAny(pattern, "{}") {
		return globPruner{} // alternatives may hide slashes
	}
	return globPruner{segs: strings.Split(pattern, "/")}
}

// mayContain reports whether the directory rel (slash-separated, relative
// to the root) may contain a match.
func (g globPruner) mayContain(rel string) bool {
	if g.segs == nil {
		return true
	}
	for i, s := range strings.Split(rel, "/") {
		if strings.Contains(g.segs[i], "**") {
			return true
		}
		if i == len(g.segs)-1 {
			return false // the last segment names files, not directories
		}
		if !doublestar.MatchUnvalidated(g.segs[i], s) {
			return false
		}
	}
	return true
}
