package builtin

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/cadre-dev/cadre/tool"
)

//go:embed grep.md
var grepDescription string

// GrepInput is Grep's input, as Claude Code names it (ripgrep's flags).
type GrepInput struct {
	Pattern    string `json:"pattern" jsonschema:"The regular expression pattern to search for in file contents"`
	Path       string `json:"path,omitempty" jsonschema:"File or directory to search in. Defaults to the current working directory."`
	Glob       string `json:"glob,omitempty" jsonschema:"Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\"); prefix with ! to exclude"`
	Type       string `json:"type,omitempty" jsonschema:"File type to search (e.g. js, py, rust, go, java). More efficient than glob for standard file types."`
	OutputMode string `json:"output_mode,omitempty" jsonschema:"Output mode: \"content\" shows matching lines (supports -A/-B/-C context, -n line numbers, head_limit), \"files_with_matches\" shows file paths (supports head_limit), \"count\" shows match counts (supports head_limit). Defaults to \"files_with_matches\"."`
	IgnoreCase bool   `json:"-i,omitempty" jsonschema:"Case insensitive search"`
	LineNums   *bool  `json:"-n,omitempty" jsonschema:"Show line numbers in output. Requires output_mode: \"content\". Defaults to true."`
	After      int    `json:"-A,omitempty" jsonschema:"Number of lines to show after each match. Requires output_mode: \"content\"."`
	Before     int    `json:"-B,omitempty" jsonschema:"Number of lines to show before each match. Requires output_mode: \"content\"."`
	Context    int    `json:"-C,omitempty" jsonschema:"Number of lines to show before and after each match. Requires output_mode: \"content\"."`
	HeadLimit  int    `json:"head_limit,omitempty" jsonschema:"Limit output to the first N lines/entries, like \"| head -N\". Works in every output mode. Defaults to no limit."`
	Multiline  bool   `json:"multiline,omitempty" jsonschema:"Enable multiline mode where . matches newlines and patterns can span lines. Default: false."`
}

// GrepMeta is the Meta of a Grep result.
type GrepMeta struct {
	Mode       string   `json:"mode"`
	NumFiles   int      `json:"numFiles"`
	Filenames  []string `json:"filenames,omitempty"`
	NumLines   int      `json:"numLines,omitempty"`
	NumMatches int      `json:"numMatches,omitempty"`
}

// Grep output modes.
const (
	grepContent = "content"
	grepFiles   = "files_with_matches"
	grepCount   = "count"
)

// grepMaxColumns truncates long lines in content output, as Claude Code
// does with ripgrep's --max-columns, so minified files do not flood it.
const grepMaxColumns = 500

// Grep returns the Grep tool.
func Grep(opts Options) tool.Tool {
	o := opts.withDefaults()
	types := fileTypes()
	t := tool.New(tool.Info{
		Name:        "Grep",
		Description: describe("Grep", grepDescription, o),
		// Tighter than what GrepInput infers (grepSchema in the tests).
		InputSchema:     schema("grep"),
		Access:          tool.AccessRead,
		ConcurrencySafe: true,
	}, func(ctx context.Context, env tool.Env, in GrepInput) (tool.Result, error) {
		return runGrep(ctx, o, types, env, in)
	})
	t.TargetOf = func(env tool.Env, in GrepInput) string { return resolve(o, env, in.Path) }
	return t
}

// grepper is one Grep call's compiled search.
type grepper struct {
	o         Options
	lineRe    *regexp.Regexp // matched against each line
	fileRe    *regexp.Regexp // whole-file prefilter (or the matcher, multiline)
	multiline bool
	include   []string // globs a file must match one of (if any)
	exclude   []string // globs no file or directory may match
	typeGlobs []string // base-name globs of the type filter
}

// grepFile is what one file yielded.
type grepFile struct {
	path    string
	mtime   time.Time
	data    []byte
	starts  []int // byte offset of each line
	matches []int // 0-based indices of matching lines, ascending
}

func runGrep(ctx context.Context, o Options, types map[string][]string, env tool.Env, in GrepInput) (tool.Result, error) {
	mode := cmp.Or(in.OutputMode, grepFiles)
	switch {
	case in.Pattern == "":
		return tool.Errorf("pattern is empty: give a regular expression to search for."), nil
	case mode != grepContent && mode != grepFiles && mode != grepCount:
		return tool.Errorf("Unknown output_mode %q: use \"content\", \"files_with_matches\" or \"count\".", in.OutputMode), nil
	case in.After < 0 || in.Before < 0 || in.Context < 0 || in.HeadLimit < 0:
		return tool.Errorf("-A, -B, -C and head_limit must not be negative."), nil
	case !in.Multiline && (strings.Contains(in.Pattern, `\n`) || strings.Contains(in.Pattern, "\n")):
		return tool.Errorf("The pattern contains a newline, which never matches within a single line. Set multiline: true to search across lines."), nil
	}
	g := &grepper{o: o, multiline: in.Multiline}
	flags := ""
	if in.IgnoreCase {
		flags += "i"
	}
	if _, err := regexp.Compile(in.Pattern); err != nil {
		return tool.Errorf("Invalid regular expression %q: %v. Grep uses Go's RE2 syntax (no lookarounds or backreferences); escape literal metacharacters such as ( [ { . with a backslash.", in.Pattern, err), nil
	}
	var err error
	if in.Multiline {
		g.fileRe, err = regexp.Compile("(?sm" + flags + ")" + in.Pattern)
	} else if g.lineRe, err = regexp.Compile(prefixFlags(flags) + in.Pattern); err == nil {
		// (?m) makes ^ and $ match at every line, so any line's match is
		// also a match in the whole file.
		g.fileRe, err = regexp.Compile("(?m" + flags + ")" + in.Pattern)
	}
	if err != nil {
		return tool.Errorf("Invalid regular expression %q with the requested flags: %v.", in.Pattern, err), nil
	}
	for _, gl := range splitGlobs(in.Glob) {
		neg := strings.HasPrefix(gl, "!")
		gl = strings.TrimPrefix(gl, "!")
		if !doublestar.ValidatePattern(gl) {
			return tool.Errorf("Invalid glob %q: check its brackets and braces.", gl), nil
		}
		if neg {
			g.exclude = append(g.exclude, gl)
		} else {
			g.include = append(g.include, gl)
		}
	}
	if in.Type != "" {
		globs, ok := types[in.Type]
		if !ok {
			return tool.Errorf("Unknown file type %q. Known types: %s. Or filter with glob instead.", in.Type, strings.Join(slices.Sorted(maps.Keys(types)), ", ")), nil
		}
		g.typeGlobs = globs
	}

	root := resolve(o, env, in.Path)
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tool.Errorf("Path does not exist: %s.", root), nil
	case err != nil:
		return fsFailure("search", root, err)
	}

	out := grepOutput{g: g, in: in, mode: mode}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return tool.Errorf("%s is not a regular file or directory (it is a device, pipe or socket); Grep searches files.", root), nil
	}
	if !fi.IsDir() {
		// A file named outright is searched whatever the filters say.
		f, err := g.search(root, fi)
		if err != nil {
			return fsFailure("read", root, err)
		}
		if f != nil {
			out.add(f)
		}
	} else {
		hidden := namesHidden(append(slices.Clone(g.include), g.typeGlobs...)...)
		err = walkIgnoring(ctx, env, root, hidden, func(p, real, rel string, d fs.DirEntry) error {
			if d.IsDir() {
				if d.Name() == "node_modules" || g.excluded(rel, d.Name()) || !shown(env, p, real, d) {
					return fs.SkipDir
				}
				return nil
			}
			// Links are not followed, so a file is only ever read where
			// the walk found it.
			if !d.Type().IsRegular() || !g.wanted(rel, d.Name()) || !shown(env, p, real, d) {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			f, err := g.search(p, fi)
			if err != nil || f == nil {
				return nil // unreadable files are skipped, as ripgrep does
			}
			if !out.add(f) {
				return errStopWalk
			}
			return nil
		})
		switch {
		case ctx.Err() != nil:
			return tool.Result{}, cancelled(ctx, "Grep")
		case err != nil && !errors.Is(err, errStopWalk):
			return fsFailure("search", root, err)
		}
	}
	return out.result(), nil
}

// errStopWalk ends a walk once the output is full.
var errStopWalk = errors.New("stop walk")

func prefixFlags(flags string) string {
	if flags == "" {
		return ""
	}
	return "(?" + flags + ")"
}

// splitGlobs splits a glob argument into its globs, as Claude Code does:
// on whitespace, and on commas outside braces.
func splitGlobs(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		if strings.Contains(f, "{") && strings.Contains(f, "}") {
			out = append(out, f)
			continue
		}
		for _, p := range strings.Split(f, ",") {
			if p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// globHit matches a glob as ripgrep does: one with a slash against the
// path from the search root, one without against the base name.
func globHit(glob, rel, name string) bool {
	if strings.Contains(glob, "/") {
		return doublestar.MatchUnvalidated(strings.TrimPrefix(glob, "/"), rel)
	}
	return doublestar.MatchUnvalidated(glob, name)
}

func (g *grepper) excluded(rel, name string) bool {
	for _, gl := range g.exclude {
		if globHit(gl, rel, name) {
			return true
		}
	}
	return false
}

func (g *grepper) wanted(rel, name string) bool {
	if g.excluded(rel, name) {
		return false
	}
	if len(g.include) > 0 && !slices.ContainsFunc(g.include, func(gl string) bool { return globHit(gl, rel, name) }) {
		return false
	}
	if g.typeGlobs != nil && !slices.ContainsFunc(g.typeGlobs, func(gl string) bool { return doublestar.MatchUnvalidated(gl, name) }) {
		return false
	}
	return true
}

// search returns the file's matches, or nil when it has none or is binary.
func (g *grepper) search(path string, fi fs.FileInfo) (*grepFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0 {
		return nil, nil
	}
	if !g.fileRe.Match(data) {
		return nil, nil
	}
	f := &grepFile{path: path, mtime: fi.ModTime(), data: data, starts: lineStarts(data)}
	if g.multiline {
		last := -1
		for _, m := range g.fileRe.FindAllIndex(data, -1) {
			from := f.lineOf(m[0])
			to := from
			if m[1] > m[0] {
				to = f.lineOf(m[1] - 1)
			}
			for l := max(from, last+1); l <= to; l++ {
				f.matches = append(f.matches, l)
				last = l
			}
		}
	} else {
		for i := range f.starts {
			if g.lineRe.Match(f.line(i)) {
				f.matches = append(f.matches, i)
			}
		}
	}
	if len(f.matches) == 0 {
		return nil, nil
	}
	return f, nil
}

// lineStarts returns the offset of each line; a trailing newline does not
// start another line.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, b := range data {
		if b == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineOf returns the 0-based line holding byte offset off.
func (f *grepFile) lineOf(off int) int {
	i, found := slices.BinarySearch(f.starts, off)
	if !found {
		i--
	}
	return max(i, 0)
}

// line returns line i without its line ending.
func (f *grepFile) line(i int) []byte {
	end := len(f.data)
	if i+1 < len(f.starts) {
		end = f.starts[i+1]
	}
	l := f.data[f.starts[i]:end]
	return bytes.TrimSuffix(l, []byte("\n"))
}

// grepOutput gathers results in the requested mode.
type grepOutput struct {
	g    *grepper
	in   GrepInput
	mode string

	files []*grepFile // files_with_matches and count

	lines     []string // content
	chars     int
	headCut   bool // head_limit reached
	sizeCut   bool // GrepOutputLimit reached
	lastGroup bool // a group was printed (for "--")
	numFiles  int
}

// add takes one file's matches; false means the output is full.
func (o *grepOutput) add(f *grepFile) bool {
	o.numFiles++
	if o.mode != grepContent {
		f.data, f.starts = nil, nil // only the counts are needed
		o.files = append(o.files, f)
		return true
	}
	before, after := o.in.Before, o.in.After
	if before == 0 {
		before = o.in.Context
	}
	if after == 0 {
		after = o.in.Context
	}
	nums := o.in.LineNums == nil || *o.in.LineNums
	isMatch := make(map[int]bool, len(f.matches))
	for _, m := range f.matches {
		isMatch[m] = true
	}
	for i := 0; i < len(f.matches); {
		// A group runs from the first match's context to the last context
		// line of the matches whose windows touch it.
		from := max(f.matches[i]-before, 0)
		to := f.matches[i] + after
		j := i + 1
		for j < len(f.matches) && f.matches[j]-before <= to+1 {
			to = f.matches[j] + after
			j++
		}
		to = min(to, len(f.starts)-1)
		if (before > 0 || after > 0) && o.lastGroup {
			if !o.emit("--") {
				return false
			}
		}
		o.lastGroup = true
		for l := from; l <= to; l++ {
			sep := "-"
			if isMatch[l] {
				sep = ":"
			}
			text, cut := truncateRunes(string(bytes.TrimSuffix(f.line(l), []byte("\r"))), grepMaxColumns)
			if cut > 0 {
				text += fmt.Sprintf("… [%d characters truncated]", cut)
			}
			line := f.path + sep + text
			if nums {
				line = fmt.Sprintf("%s%s%d%s%s", f.path, sep, l+1, sep, text)
			}
			if !o.emit(line) {
				return false
			}
		}
		i = j
	}
	return true
}

// emit appends one content line unless a limit is reached.
func (o *grepOutput) emit(line string) bool {
	if o.in.HeadLimit > 0 && len(o.lines) >= o.in.HeadLimit {
		o.headCut = true
		return false
	}
	if o.chars+len(line)+1 > o.g.o.GrepOutputLimit && len(o.lines) > 0 {
		o.sizeCut = true
		return false
	}
	o.lines = append(o.lines, line)
	o.chars += len(line) + 1
	return true
}

func (o *grepOutput) result() tool.Result {
	meta := GrepMeta{Mode: o.mode, NumFiles: o.numFiles}
	var b strings.Builder
	switch o.mode {
	case grepContent:
		meta.NumLines = len(o.lines)
		if len(o.lines) == 0 {
			return tool.Result{Content: tool.Text("No matches found").Content, Meta: meta}
		}
		b.WriteString(strings.Join(o.lines, "\n"))
		switch {
		case o.headCut:
			fmt.Fprintf(&b, "\n\n(Showing the first %d lines (head_limit); there are more matches.)", o.in.HeadLimit)
		case o.sizeCut:
			fmt.Fprintf(&b, "\n\n(Output truncated at %d characters; there are more matches. Narrow the search with path, glob, type or head_limit.)", o.g.o.GrepOutputLimit)
		}

	case grepFiles:
		if len(o.files) == 0 {
			return tool.Result{Content: tool.Text("No files found").Content, Meta: meta}
		}
		slices.SortStableFunc(o.files, func(a, b *grepFile) int {
			return cmp.Or(b.mtime.Compare(a.mtime), strings.Compare(a.path, b.path))
		})
		shown := o.files
		if o.in.HeadLimit > 0 && len(shown) > o.in.HeadLimit {
			shown = shown[:o.in.HeadLimit]
		}
		fmt.Fprintf(&b, "Found %s", plural(len(o.files), "file"))
		if len(shown) < len(o.files) {
			fmt.Fprintf(&b, " (showing the first %d, head_limit)", len(shown))
		}
		for i, f := range shown {
			if b.Len()+len(f.path)+1 > o.g.o.GrepOutputLimit {
				fmt.Fprintf(&b, "\n(%d more files not shown: output capped at %d characters. Narrow the search or use head_limit.)", len(shown)-i, o.g.o.GrepOutputLimit)
				break
			}
			meta.Filenames = append(meta.Filenames, f.path)
			b.WriteString("\n" + f.path)
		}

	case grepCount:
		total := 0
		for _, f := range o.files {
			total += len(f.matches)
		}
		meta.NumMatches = total
		if len(o.files) == 0 {
			return tool.Result{Content: tool.Text("No matches found").Content, Meta: meta}
		}
		shown := o.files
		if o.in.HeadLimit > 0 && len(shown) > o.in.HeadLimit {
			shown = shown[:o.in.HeadLimit]
		}
		for i, f := range shown {
			entry := fmt.Sprintf("%s:%d", f.path, len(f.matches))
			if i > 0 && b.Len()+len(entry)+1 > o.g.o.GrepOutputLimit {
				fmt.Fprintf(&b, "\n(%d more files not shown: output capped at %d characters. Narrow the search or use head_limit.)", len(shown)-i, o.g.o.GrepOutputLimit)
				break
			}
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(entry)
		}
		fmt.Fprintf(&b, "\n\nFound %s across %s.", plural(total, "matching line"), plural(len(o.files), "file"))
		if len(shown) < len(o.files) {
			fmt.Fprintf(&b, " (Showing the first %d files, head_limit.)", len(shown))
		}
	}
	return tool.Result{Content: tool.Text(b.String()).Content, Meta: meta}
}

// fileTypes is Grep's type table: a small subset of ripgrep's, matched
// against base names.
func fileTypes() map[string][]string {
	t := map[string][]string{
		"c":         {"*.c", "*.h"},
		"cpp":       {"*.cpp", "*.cc", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h++", "*.h", "*.inl"},
		"cs":        {"*.cs"},
		"css":       {"*.css", "*.scss"},
		"dart":      {"*.dart"},
		"docker":    {"Dockerfile", "Dockerfile.*", "*.dockerfile"},
		"elixir":    {"*.ex", "*.exs"},
		"erlang":    {"*.erl", "*.hrl"},
		"go":        {"*.go"},
		"haskell":   {"*.hs", "*.lhs"},
		"html":      {"*.html", "*.htm", "*.xhtml"},
		"java":      {"*.java"},
		"js":        {"*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"},
		"json":      {"*.json", "*.jsonl", "*.jsonc"},
		"kotlin":    {"*.kt", "*.kts"},
		"lua":       {"*.lua"},
		"make":      {"Makefile", "makefile", "GNUmakefile", "*.mk", "*.mak"},
		"md":        {"*.md", "*.markdown", "*.mdx", "*.mkd"},
		"php":       {"*.php"},
		"proto":     {"*.proto"},
		"py":        {"*.py", "*.pyi"},
		"r":         {"*.R", "*.r", "*.Rmd"},
		"rb":        {"*.rb", "*.rake", "*.gemspec", "Gemfile", "Rakefile", "config.ru"},
		"rust":      {"*.rs"},
		"scala":     {"*.scala", "*.sbt"},
		"sh":        {"*.sh", "*.bash", "*.zsh", ".bashrc", ".bash_profile", ".zshrc", ".profile"},
		"sql":       {"*.sql"},
		"svelte":    {"*.svelte"},
		"swift":     {"*.swift"},
		"terraform": {"*.tf", "*.tfvars"},
		"toml":      {"*.toml"},
		"ts":        {"*.ts", "*.tsx", "*.mts", "*.cts"},
		"txt":       {"*.txt"},
		"vue":       {"*.vue"},
		"xml":       {"*.xml", "*.xsd", "*.xsl", "*.xslt", "*.svg"},
		"yaml":      {"*.yaml", "*.yml"},
		"zig":       {"*.zig"},
	}
	// ripgrep's long names.
	for alias, name := range map[string]string{"markdown": "md", "python": "py", "ruby": "rb", "typescript": "ts", "javascript": "js", "csharp": "cs", "shell": "sh", "yml": "yaml", "kt": "kotlin", "rs": "rust", "tf": "terraform"} {
		t[alias] = t[name]
	}
	return t
}
