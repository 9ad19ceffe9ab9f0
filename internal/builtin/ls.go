package builtin

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/cadre-dev/cadre/tool"
)

//go:embed ls.md
var lsDescription string

// LSInput is LS's input, as Claude Code names it.
type LSInput struct {
	Path   string   `json:"path" jsonschema:"The absolute path to the directory to list"`
	Ignore []string `json:"ignore,omitempty" jsonschema:"List of glob patterns to ignore"`
}

// LS returns the LS tool.
func LS(opts Options) tool.Tool {
	o := opts.withDefaults()
	t := tool.New(tool.Info{
		Name:            "LS",
		Description:     describe("LS", lsDescription, o),
		InputSchema:     schema("ls"),
		Access:          tool.AccessRead,
		ConcurrencySafe: true,
	}, func(ctx context.Context, env tool.Env, in LSInput) (tool.Result, error) {
		return runLS(ctx, o, env, in)
	})
	t.TargetOf = func(env tool.Env, in LSInput) string { return resolve(o, env, in.Path) }
	return t
}

// lsNoExpand names directories LS lists but does not open: they are
// large and rarely what the model is looking for.
func lsNoExpand(name string) bool { return name == "node_modules" || name == "__pycache__" }

func runLS(ctx context.Context, o Options, env tool.Env, in LSInput) (tool.Result, error) {
	if in.Path == "" {
		return tool.Errorf("path is empty: give the absolute path of the directory to list."), nil
	}
	for _, p := range in.Ignore {
		if !doublestar.ValidatePattern(p) {
			return tool.Errorf("Invalid ignore pattern %q: check its brackets and braces.", p), nil
		}
	}
	root := resolve(o, env, in.Path)
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tool.Errorf("Directory does not exist: %s.", root), nil
	case err != nil:
		return fsFailure("list", root, err)
	case !fi.IsDir():
		return tool.Errorf("%s is a file, not a directory; use Read to read it.", root), nil
	}
	ignored := func(rel, name string) bool {
		for _, p := range in.Ignore {
			if globHit(strings.TrimSuffix(p, "/"), rel, name) {
				return true
			}
		}
		return false
	}

	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fsFailure("list", root, err)
	}

	// Breadth first, so that a cap leaves a view of the whole top of the
	// tree rather than the bottom of its first branch.
	type dir struct{ abs, real, rel string }
	children := map[string][]fs.DirEntry{} // by rel ("" for root)
	queue := []dir{{root, real, ""}}
	count, truncated := 0, false
	filter := newTreeFilter(env, real, nil)
	unlisted := 0 // hidden or ignored entries the caller may see
	for len(queue) > 0 && !truncated {
		if ctx.Err() != nil {
			return tool.Result{}, cancelled(ctx, "LS")
		}
		d := queue[0]
		queue = queue[1:]
		if d.rel != "" {
			// Read when listed, not when queued: the cap leaves most
			// of a large tree's queue unlisted.
			filter.enter(d.real, d.rel)
		}
		entries, err := os.ReadDir(d.abs)
		if err != nil && d.rel == "" {
			return fsFailure("list", root, err)
		}
		for _, e := range entries {
			rel := path.Join(d.rel, e.Name())
			abs, real := filepath.Join(d.abs, e.Name()), filepath.Join(d.real, e.Name())
			if ignored(rel, e.Name()) || !shown(env, abs, real, e) {
				continue
			}
			if filter.skip(rel, e.IsDir()) {
				unlisted++
				continue
			}
			if count == o.LSMaxEntries {
				truncated = true
				break
			}
			count++
			children[d.rel] = append(children[d.rel], e)
			if e.IsDir() && !lsNoExpand(e.Name()) {
				queue = append(queue, dir{abs, real, rel})
			}
		}
	}

	var b strings.Builder
	if truncated {
		fmt.Fprintf(&b, "There are more than %d entries under %s. Use LS on a subdirectory, or Glob and Grep, to explore further. The first %d entries are listed below:\n\n", o.LSMaxEntries, root, o.LSMaxEntries)
	}
	fmt.Fprintf(&b, "- %s\n", strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
	var print func(rel string, depth int)
	print = func(rel string, depth int) {
		for _, e := range children[rel] {
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			fmt.Fprintf(&b, "%s- %s\n", strings.Repeat("  ", depth), name)
			if e.IsDir() {
				print(path.Join(rel, e.Name()), depth+1)
			}
		}
	}
	print("", 1)
	if count == 0 {
		b.WriteString("  (empty directory)\n")
	}
	if unlisted > 0 {
		fmt.Fprintf(&b, "(%d hidden or ignored not listed: dot-files and what .gitignore and .ignore files exclude; LS such a directory by its path to list it)\n", unlisted)
	}
	return tool.Text(strings.TrimSuffix(b.String(), "\n")), nil
}
