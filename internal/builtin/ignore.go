package builtin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/cadre-dev/cadre/tool"
)

// Grep, Glob and LS leave out what ripgrep leaves out: what .gitignore
// files (inside a git repository), .git/info/exclude and .ignore files
// exclude, and hidden files and directories unless the call names them.
//
// Ignore files come from the repository being searched, which may be
// hostile, so reading them is bounded: an ignore file is read only when it
// is a regular file reached without following a symbolic link (a FIFO or a
// link to /dev/zero would block or never end), the repository's .git is
// used only when it is a directory (a .git file's "gitdir:" could point
// anywhere), lines longer than ignoreLineMax are dropped, and the patterns
// in effect in one directory (its ignore files' and its parents') add up
// to at most ignoreRulesMax bytes, the rest of a file unread: the cost of
// matching a path grows with those bytes and the path's depth, and no
// more. What is cut off only shows more files; ignore rules are a
// convenience, never a guard (permission rules are: Env.Readable still
// decides every entry).
const (
	ignoreRulesMax = 64 << 10
	ignoreLineMax  = 1024
	// ignoreUpMax bounds the climb from the search root to the
	// repository's top.
	ignoreUpMax = 256
)

// The ignore files read in every directory of a walk.
const (
	gitignoreName = ".gitignore"
	ignoreName    = ".ignore"
)

// ignoreLayer is what the ignore files of one directory say, on top of
// its parent's layer: together, what applies to the directory's entries.
// Each layer holds only its own patterns, so that a deep tree of ignore
// files costs what they hold, not that times their depth.
type ignoreLayer struct {
	parent *ignoreLayer
	ignore []gitignore.Pattern // its .ignore: .ignore files take precedence, as in ripgrep
	git    []gitignore.Pattern // its .gitignore (the bottom layer: .git/info/exclude)
	size   int                 // bytes of the patterns here and above, up to ignoreRulesMax
}

// decide returns whether the layer ignores the path (components relative
// to the walk's top), and whether any pattern spoke of it. The last
// pattern that matches decides: deeper files, and later lines, first.
func (l *ignoreLayer) decide(parts []string, isDir bool) (ignored, matched bool) {
	for _, pick := range []func(*ignoreLayer) []gitignore.Pattern{
		func(l *ignoreLayer) []gitignore.Pattern { return l.ignore },
		func(l *ignoreLayer) []gitignore.Pattern { return l.git },
	} {
		for at := l; at != nil; at = at.parent {
			ps := pick(at)
			for i := len(ps) - 1; i >= 0; i-- {
				switch ps[i].Match(parts, isDir) {
				case gitignore.Exclude:
					return true, true
				case gitignore.Include:
					return false, true
				}
			}
		}
	}
	return false, false
}

// count is how many patterns the layer and its parents hold.
func (l *ignoreLayer) count() int {
	n := 0
	for at := l; at != nil; at = at.parent {
		n += len(at.ignore) + len(at.git)
	}
	return n
}

// treeFilter decides which entries one walk of Grep, Glob or LS shows.
type treeFilter struct {
	env tool.Env
	// inRepo: .gitignore files and .git/info/exclude apply (as in
	// ripgrep, only inside a git repository).
	inRepo bool
	// top is the root's path relative to the directory the patterns'
	// domains start from (the repository's top), as components.
	top []string
	// hiddenOK reports whether the call names a hidden entry explicitly.
	hiddenOK func(name string) bool
	layers   map[string]*ignoreLayer // by directory, relative to the root ("" for the root)
}

// newTreeFilter reads the ignore rules that apply to a walk of root (an
// absolute, symlink-resolved directory): those of the repository above it
// and of root itself. hiddenOK may be nil: no hidden entry is named.
func newTreeFilter(env tool.Env, root string, hiddenOK func(name string) bool) *treeFilter {
	f := &treeFilter{env: env, hiddenOK: hiddenOK, layers: map[string]*ignoreLayer{}}
	if f.hiddenOK == nil {
		f.hiddenOK = func(string) bool { return false }
	}
	top := root
	if repo, ok := repoTop(root); ok {
		f.inRepo, top = true, repo
	} else if cwd, err := filepath.EvalSymlinks(env.Cwd); env.Cwd != "" && err == nil && underDir(cwd, root) {
		// .ignore files of the working directory hold for a search
		// of one of its folders.
		top = cwd
	}
	rel, err := filepath.Rel(top, root)
	if err != nil || rel == "." {
		rel = ""
	}
	if rel != "" {
		f.top = strings.Split(filepath.ToSlash(rel), "/")
	}

	// The rules of top and of each directory down to root's parent.
	layer := &ignoreLayer{}
	if f.inRepo {
		// Neither .git nor info may be a link: the file read is the
		// repository's own.
		if realDir(filepath.Join(top, ".git")) && realDir(filepath.Join(top, ".git", "info")) {
			layer.git = f.read(filepath.Join(top, ".git", "info", "exclude"), nil, layer.git, &layer.size)
		}
	}
	dir := top
	for i := 0; i < len(f.top); i++ {
		layer = f.load(dir, f.top[:i], layer)
		if ignored, _ := layer.decide(f.top[:i+1], true); ignored {
			// The call names an ignored directory: it is searched,
			// as ripgrep searches a path it is given, with only its
			// own ignore files.
			return f.restart(root)
		}
		dir = filepath.Join(dir, f.top[i])
	}
	f.layers[""] = f.load(root, f.top, layer)
	return f
}

// restart makes f a filter whose rules start at root.
func (f *treeFilter) restart(root string) *treeFilter {
	f.top = nil
	f.layers = map[string]*ignoreLayer{"": f.load(root, nil, &ignoreLayer{})}
	return f
}

// realDir reports whether p is a directory, not a link to one.
func realDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// repoTop returns the nearest directory at or above dir holding .git.
func repoTop(dir string) (string, bool) {
	for range ignoreUpMax {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", false
}

// underDir reports whether p is dir or below it (both clean and absolute).
func underDir(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// load returns parent's layer with the rules of the ignore files in dir,
// whose path relative to the top is domain.
func (f *treeFilter) load(dir string, domain []string, parent *ignoreLayer) *ignoreLayer {
	var git, ign []gitignore.Pattern
	size := parent.size
	if f.inRepo {
		git = f.read(filepath.Join(dir, gitignoreName), domain, nil, &size)
	}
	ign = f.read(filepath.Join(dir, ignoreName), domain, nil, &size)
	if len(git) == 0 && len(ign) == 0 {
		return parent
	}
	return &ignoreLayer{parent: parent, ignore: ign, git: git, size: size}
}

// read appends the patterns of the ignore file at p to ps, adding their
// bytes to *size and stopping before it passes ignoreRulesMax.
func (f *treeFilter) read(p string, domain []string, ps []gitignore.Pattern, size *int) []gitignore.Pattern {
	if *size >= ignoreRulesMax || !shown(f.env, p, p, nil) {
		return ps
	}
	data, err := readIgnoreFile(p, ignoreRulesMax-*size)
	if err != nil {
		return ps
	}
	for line := range bytes.Lines(data) {
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 || line[0] == '#' || len(line) > ignoreLineMax {
			continue
		}
		*size += len(line)
		s := string(line)
		if strings.HasPrefix(s, `\#`) || strings.HasPrefix(s, `\!`) {
			s = s[1:] // an escaped comment or negation marker is literal
		}
		ps = append(ps, gitignore.ParsePattern(s, domain))
	}
	return ps
}

// readIgnoreFile reads up to max bytes of the regular file at p, never
// through a symbolic link and never blocking on a FIFO or device; a cut
// keeps whole lines.
func readIgnoreFile(p string, max int) ([]byte, error) {
	file, err := openNoFollow(p)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(file, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > max {
		data = data[:bytes.LastIndexByte(data[:max], '\n')+1]
	}
	return data, nil
}

// skip reports whether the walk leaves out the entry at rel (slash
// separated, relative to the root): a version-control directory, a hidden
// entry the call does not name, or what the ignore files exclude.
func (f *treeFilter) skip(rel string, isDir bool) bool {
	name := path.Base(rel)
	if isDir && isVCSDir(name) {
		return true
	}
	if strings.HasPrefix(name, ".") && !f.hiddenOK(name) {
		return true
	}
	layer := f.layers[parentRel(rel)]
	if layer == nil {
		return false // its directory was never entered: nothing loaded
	}
	parts := append(append(make([]string, 0, len(f.top)+strings.Count(rel, "/")+1), f.top...), strings.Split(rel, "/")...)
	ignored, _ := layer.decide(parts, isDir)
	return ignored
}

// enter reads the ignore files of the directory at rel (real: where it
// is), which the walk is about to list.
func (f *treeFilter) enter(real, rel string) {
	parent := f.layers[parentRel(rel)]
	if parent == nil {
		parent = &ignoreLayer{}
	}
	domain := append(append([]string(nil), f.top...), strings.Split(rel, "/")...)
	f.layers[rel] = f.load(real, domain, parent)
}

// parentRel is the directory of rel, "" for the root.
func parentRel(rel string) string {
	d := path.Dir(rel)
	if d == "." {
		return ""
	}
	return d
}

// namesHidden returns a hiddenOK for globs: a hidden name is named when a
// path segment of one of them that starts with a dot matches it (".env",
// "**/.github/*.yml", ".*"), alternatives in braces included.
func namesHidden(globs ...string) func(name string) bool {
	var segs []string
	for _, g := range globs {
		for _, s := range strings.Split(g, "/") {
			if strings.HasPrefix(s, ".") || strings.Contains(s, "{.") || strings.Contains(s, ",.") {
				segs = append(segs, s)
			}
		}
	}
	if len(segs) == 0 {
		return nil
	}
	return func(name string) bool {
		for _, s := range segs {
			if ok, _ := doublestar.Match(s, name); ok {
				return true
			}
		}
		return false
	}
}

// walkIgnoring walks root as walkTree does, leaving out what the ignore
// files and the hidden-file rule leave out (hiddenOK: see treeFilter);
// visit still decides Env.Readable and its own filters, and may return
// fs.SkipDir for a directory.
func walkIgnoring(ctx context.Context, env tool.Env, root string, hiddenOK func(name string) bool, visit func(path, real, rel string, d fs.DirEntry) error) error {
	resolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	filter := newTreeFilter(env, resolved, hiddenOK)
	return walkTree(ctx, root, func(p, real, rel string, d fs.DirEntry) error {
		if filter.skip(rel, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err := visit(p, real, rel, d); err != nil || !d.IsDir() {
			return err
		}
		filter.enter(real, rel)
		return nil
	})
}
