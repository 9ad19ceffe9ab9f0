package contextfiles

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"

	"github.com/cadre-dev/cadre/llm"
)

// Defaults of the caps.
const (
	DefaultMaxDepth      = 5
	DefaultMaxFileBytes  = 64 << 10
	DefaultMaxTotalBytes = 256 << 10
)

// Kinds of file, by who wrote it.
const (
	KindUser    = "user"    // the user's, for every project
	KindProject = "project" // checked into the project
	KindLocal   = "local"   // the user's private notes for this project
)

// Options says where to look.
type Options struct {
	// Cwd is the working directory (absolute).
	Cwd string
	// Root is the workspace root: directories from it down to Cwd are
	// read, and nothing of the project's may lie outside it. "" means the
	// repository root above Cwd (the nearest directory with .git), or Cwd
	// outside a repository.
	Root string
	// Home is the user's home directory ("" skips ~/.claude/CLAUDE.md);
	// StateDir is $CADRE_HOME ("" skips it).
	Home, StateDir string
	// Caps; 0 means the default.
	MaxDepth, MaxFileBytes, MaxTotalBytes int
}

// File is one context file as the model sees it.
type File struct {
	// Path is where it was found (or imported from), as written to the
	// model.
	Path    string
	Kind    string
	Content string
	// Subagents says the file goes to every subagent as well (S-E4, the
	// gateway's rule): an AGENTS.md or TOOLS.md, or a file one imports.
	// The rest (the CLAUDE.md family) reaches a subagent only where Claude
	// Code gives it one (ForSubagent).
	Subagents bool
}

// Load finds the context files opts names. It never fails: what cannot be
// read, or is refused, is a warning ("path: why") and the rest load.
func Load(opts Options) ([]File, []string) {
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.MaxTotalBytes <= 0 {
		opts.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if opts.Root == "" {
		opts.Root = repoRoot(opts.Cwd)
	}
	l := &loader{opts: opts, seen: map[string]int{}}
	var userRoots []string
	for _, d := range []string{opts.Home, opts.StateDir} {
		if d != "" {
			userRoots = append(userRoots, d)
		}
	}
	if opts.StateDir != "" {
		l.top(filepath.Join(opts.StateDir, "AGENTS.md"), KindUser, userRoots)
		l.top(filepath.Join(opts.StateDir, "TOOLS.md"), KindUser, userRoots)
		l.top(filepath.Join(opts.StateDir, "CLAUDE.md"), KindUser, userRoots)
	}
	if opts.Home != "" {
		l.top(filepath.Join(opts.Home, ".claude", "CLAUDE.md"), KindUser, userRoots)
	}
	projRoots := []string{opts.Root}
	for _, dir := range between(opts.Root, opts.Cwd) {
		l.top(filepath.Join(dir, "CLAUDE.md"), KindProject, projRoots)
		l.top(filepath.Join(dir, ".claude", "CLAUDE.md"), KindProject, projRoots)
		l.top(filepath.Join(dir, "AGENTS.md"), KindProject, projRoots)
		l.top(filepath.Join(dir, "TOOLS.md"), KindProject, projRoots)
		l.top(filepath.Join(dir, "CLAUDE.local.md"), KindLocal, projRoots)
	}
	return l.files, l.warnings
}

// repoRoot is the nearest directory at or above cwd holding .git, or cwd.
func repoRoot(cwd string) string {
	for dir := cwd; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return cwd
		}
		dir = parent
	}
}

// between lists root, then each directory down to cwd; only cwd when cwd
// is not under root.
func between(root, cwd string) []string {
	rel, err := filepath.Rel(root, cwd)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return []string{cwd}
	}
	dirs := []string{root}
	if rel == "." {
		return dirs
	}
	dir := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		dir = filepath.Join(dir, part)
		dirs = append(dirs, dir)
	}
	return dirs
}

type loader struct {
	opts     Options
	seen     map[string]int // real paths read: index in files, or -1
	total    int
	full     bool
	files    []File
	warnings []string
}

func (l *loader) warn(path, format string, args ...any) {
	l.warnings = append(l.warnings, path+": "+fmt.Sprintf(format, args...))
}

// top reads a file Load looks for by name; it is fine for it not to exist.
func (l *loader) top(path, kind string, roots []string) {
	if _, err := os.Lstat(path); err != nil {
		return
	}
	base := filepath.Base(path)
	l.read(path, kind, roots, 0, base == "AGENTS.md" || base == "TOOLS.md")
}

// read adds the file at path and then, depth-first, what it imports;
// shared marks them for subagents too (File.Subagents).
func (l *loader) read(path, kind string, roots []string, depth int, shared bool) {
	if l.full {
		return
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			l.warn(path, "cannot read context file: %v", err)
		}
		return
	}
	if !insideAny(roots, real) {
		l.warn(path, "not read: it resolves to %s, outside %s (a context file and its imports must stay inside it)", real, strings.Join(roots, " and "))
		return
	}
	if i, ok := l.seen[real]; ok {
		if shared && i >= 0 && !l.files[i].Subagents {
			// An AGENTS.md that is a link to the CLAUDE.md read before
			// it: the one file is an AGENTS.md too, and so are its
			// imports.
			l.files[i].Subagents = true
			for _, imp := range Imports(l.files[i].Content) {
				l.read(l.resolve(imp, filepath.Dir(l.files[i].Path)), kind, roots, depth+1, shared)
			}
		}
		return
	}
	l.seen[real] = -1
	text, cut, err := readCapped(real, l.opts.MaxFileBytes)
	if err != nil {
		l.warn(path, "cannot read context file: %v", err)
		return
	}
	if cut {
		l.warn(path, "longer than %d bytes: only the start is used", l.opts.MaxFileBytes)
	}
	if l.total+len(text) > l.opts.MaxTotalBytes {
		l.warn(path, "not read: the context files already reach %d bytes, the limit; later files are left out", l.opts.MaxTotalBytes)
		l.full = true
		return
	}
	l.total += len(text)
	l.seen[real] = len(l.files)
	l.files = append(l.files, File{Path: path, Kind: kind, Content: text, Subagents: shared})
	imports := Imports(text)
	if len(imports) > 0 && depth >= l.opts.MaxDepth {
		l.warn(path, "imports not followed: imports nest at most %d deep", l.opts.MaxDepth)
		return
	}
	for _, imp := range imports {
		l.read(l.resolve(imp, filepath.Dir(path)), kind, roots, depth+1, shared)
	}
}

// ForSubagent is the part of the main agent's files a subagent gets
// (S-E4): AGENTS.md and TOOLS.md, the gateway's rule, and the CLAUDE.md
// family too when claudeMD says Claude Code would give the agent its
// CLAUDE.md. The order is the main agent's.
func ForSubagent(files []File, claudeMD bool) []File {
	if claudeMD {
		return files
	}
	var out []File
	for _, f := range files {
		if f.Subagents {
			out = append(out, f)
		}
	}
	return out
}

func (l *loader) resolve(imp, dir string) string {
	switch {
	case strings.HasPrefix(imp, "~/"):
		if l.opts.Home == "" {
			return filepath.Join(dir, imp) // refused or missing, as any other path
		}
		return filepath.Join(l.opts.Home, imp[2:])
	case filepath.IsAbs(imp):
		return filepath.Clean(imp)
	}
	return filepath.Join(dir, imp)
}

// readCapped reads a regular file, at most limit bytes of it; cut says
// whether there was more. The text is cut on a line boundary when one is
// near, and never inside a UTF-8 sequence.
func readCapped(path string, limit int) (string, bool, error) {
	// Non-blocking: opening a named pipe planted as CLAUDE.md must not
	// wait for a writer. A regular file reads as usual.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", false, err
	}
	if !info.Mode().IsRegular() {
		return "", false, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return "", false, err
	}
	if len(b) <= limit {
		return string(b), false, nil
	}
	b = b[:limit]
	if i := strings.LastIndexByte(string(b), '\n'); i > limit/2 {
		b = b[:i+1]
	}
	return strings.ToValidUTF8(string(b), ""), true, nil
}

func insideAny(roots []string, path string) bool {
	for _, r := range roots {
		if real, err := filepath.EvalSymlinks(r); err == nil {
			r = real
		}
		if rel, err := filepath.Rel(r, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

var importPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|\s)@((?:~/|/|\./|\.\./)?[^\s@` + "`" + `]+)`)
})

// Imports lists the paths a context file imports, in order: "@path" words
// outside code spans and fenced code blocks whose path has a '/' or a '.'
// (so "@alice" is a mention, not an import). Trailing punctuation that
// ends a sentence is not part of the path.
func Imports(text string) []string {
	var out []string
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trim, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			fence = trim[:3]
			continue
		}
		for _, m := range importPattern().FindAllStringSubmatch(withoutCodeSpans(line), -1) {
			p := strings.TrimRight(m[1], ".,;:!?)")
			if p == "" || !strings.ContainsAny(p, "/.") || strings.Contains(p, "://") {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

// withoutCodeSpans blanks `code spans`, so an @ inside one imports
// nothing.
func withoutCodeSpans(line string) string {
	b := []byte(line)
	in := false
	for i, c := range b {
		if c == '`' {
			in = !in
			continue
		}
		if in {
			b[i] = ' '
		}
	}
	return string(b)
}

//go:embed reminder.md
var intro string

// describe says whose a file is, for the model.
func describe(kind string) string {
	switch kind {
	case KindUser:
		return "the user's own instructions, for every project"
	case KindLocal:
		return "the user's private instructions for this project, not checked in"
	}
	return "project instructions, checked into the codebase"
}

// Render is the context block of files: "" when there are none.
func Render(files []File) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(intro))
	for _, f := range files {
		fmt.Fprintf(&b, "\n\nContents of %s (%s):\n\n%s", f.Path, describe(f.Kind), strings.TrimRight(f.Content, "\n"))
	}
	return b.String()
}

// Blocks is the context of files as the blocks the loop puts before the
// conversation (loop.Config.Preamble): one <system-reminder> text block,
// or none.
func Blocks(files []File) []llm.Block {
	text := Render(files)
	if text == "" {
		return nil
	}
	return []llm.Block{llm.Text("<system-reminder>\n" + text + "\n</system-reminder>")}
}
