package builtin

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/cadre-dev/cadre/internal/tmplexec"
	"github.com/cadre-dev/cadre/tool"
)

// Options tunes the tools; the zero value of every field means its default.
type Options struct {
	// ReadLineLimit is how many lines Read shows when no limit is given
	// (default 2000).
	ReadLineLimit int
	// ReadLineMaxChars truncates longer lines in Read's output (default 2000).
	ReadLineMaxChars int
	// ReadMaxBytes caps Read's output; the rest is left for a later call with
	// an offset (default 256 KiB).
	ReadMaxBytes int
	// GlobMaxResults caps Glob's list (default 100).
	GlobMaxResults int
	// GrepOutputLimit caps Grep's output in characters (default 30000).
	GrepOutputLimit int
	// LSMaxEntries caps LS's listing (default 1000).
	LSMaxEntries int
	// BashDefaultTimeout applies when a Bash call gives none (default 2m).
	BashDefaultTimeout time.Duration
	// BashMaxTimeout is the most a Bash call may ask for (default 10m).
	BashMaxTimeout time.Duration
	// BashOutputLimit caps Bash's combined output in characters, keeping
	// the head and the tail (default 30000).
	BashOutputLimit int
	// BashBackgroundDefaultTimeout limits a run_in_background command that
	// gives no timeout (default 30m); BashBackgroundMaxTimeout is the most
	// one may ask for (default 2h). The command is killed when it passes.
	BashBackgroundDefaultTimeout, BashBackgroundMaxTimeout time.Duration
	// Shells, when set, starts run_in_background commands as tasks; nil
	// refuses them. The subagent service sets it per agent (BindShells).
	Shells Shells
	// BashWaitDelay is how long Bash waits, after the shell has exited or been
	// killed, for stray processes still holding its output open (default 1s).
	BashWaitDelay time.Duration
	// Shell runs Bash commands as Shell -c command (default bash, else sh).
	Shell string
	// HomeDir replaces "~" in paths (default os.UserHomeDir).
	HomeDir string
	// WebFetchMaxBytes caps the bytes WebFetch reads of a page (default 5
	// MiB); WebFetchMaxChars what one call returns of its text, the rest
	// left for calls with an offset (default 50000); WebFetchTimeout
	// bounds a fetch (default 30s).
	WebFetchMaxBytes, WebFetchMaxChars int
	WebFetchTimeout                    time.Duration
	// WebFetchAllowPrivate lets WebFetch reach loopback and private
	// network addresses, which it refuses by default (a model's fetch
	// must not reach services on the user's machine or network).
	WebFetchAllowPrivate bool
	// WebFetchClient, if set, makes WebFetch's requests (tests); its
	// redirect policy is replaced by WebFetch's own.
	WebFetchClient *http.Client
	// Env is added to the environment Bash commands inherit ("KEY=value";
	// later entries win), as the settings' "env" asks.
	Env []string
	// Sandbox, when set, starts every Bash command (sandbox.Runner.Command
	// is the one way in), and its refusals are explained in the result.
	Sandbox *sandbox.Runner
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.ReadLineLimit, 2000)
	def(&o.ReadLineMaxChars, 2000)
	def(&o.ReadMaxBytes, 256<<10)
	def(&o.GlobMaxResults, 100)
	def(&o.GrepOutputLimit, 30000)
	def(&o.LSMaxEntries, 1000)
	def(&o.BashOutputLimit, 30000)
	def(&o.WebFetchMaxBytes, 5<<20)
	def(&o.WebFetchMaxChars, 50000)
	if o.WebFetchTimeout <= 0 {
		o.WebFetchTimeout = 30 * time.Second
	}
	if o.BashDefaultTimeout <= 0 {
		o.BashDefaultTimeout = 2 * time.Minute
	}
	if o.BashMaxTimeout <= 0 {
		o.BashMaxTimeout = 10 * time.Minute
	}
	if o.BashDefaultTimeout > o.BashMaxTimeout {
		o.BashDefaultTimeout = o.BashMaxTimeout
	}
	if o.BashBackgroundMaxTimeout <= 0 {
		o.BashBackgroundMaxTimeout = 2 * time.Hour
	}
	if o.BashBackgroundDefaultTimeout <= 0 {
		o.BashBackgroundDefaultTimeout = 30 * time.Minute
	}
	if o.BashBackgroundDefaultTimeout > o.BashBackgroundMaxTimeout {
		o.BashBackgroundDefaultTimeout = o.BashBackgroundMaxTimeout
	}
	if o.BashWaitDelay <= 0 {
		o.BashWaitDelay = time.Second
	}
	return o
}

// schemas are the tools' input schemas, encoded once when the code changes
// (TestSchemasAreTheInputTypes writes them with -update) rather than
// inferred by reflection in every process that offers the tools.
//
//go:embed schemas/*.json
var schemas embed.FS

// schema returns the embedded input schema of the named tool.
func schema(name string) json.RawMessage {
	b, err := schemas.ReadFile("schemas/" + name + ".json")
	if err != nil {
		panic("builtin: no embedded schema for " + name) // caught by the tests
	}
	return b
}

// Tools returns Read, Write, Edit, Glob, Grep, LS, Bash, TodoWrite and
// WebFetch, in that order.
func Tools(opts Options) []tool.Tool {
	return []tool.Tool{Read(opts), Write(opts), Edit(opts), Glob(opts), Grep(opts), LS(opts), Bash(opts), TodoWrite(opts), WebFetch(opts)}
}

// describe renders a tool's embedded description; the templates are ours,
// so a failure is a programming error caught by the tests.
func describe(name, text string, o Options) string {
	t := template.Must(template.New(name).Parse(text))
	var b bytes.Buffer
	data := struct {
		Options
		BashDefaultTimeoutMs, BashMaxTimeoutMs int64
	}{o, o.BashDefaultTimeout.Milliseconds(), o.BashMaxTimeout.Milliseconds()}
	if err := tmplexec.New(t, nil).Execute(&b, data); err != nil {
		panic(fmt.Sprintf("builtin: render %s description: %v", name, err))
	}
	return strings.TrimSpace(b.String())
}

// resolve turns a tool's path argument into an absolute, clean path: "~"
// expands to the home directory and relative paths are taken from env.Cwd.
// An empty p means env.Cwd itself.
func resolve(o Options, env tool.Env, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home := o.HomeDir
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		if home != "" {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		cwd := env.Cwd
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// isVCSDir reports whether a directory name is version-control metadata,
// which no tool lists or searches.
func isVCSDir(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", ".jj", ".bzr":
		return true
	}
	return false
}

// truncateRunes shortens s to at most n runes, returning the result and how
// many runes were cut.
func truncateRunes(s string, n int) (string, int) {
	if len(s) <= n { // bytes ≥ runes, so this is the cheap common case
		return s, 0
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i], utf8.RuneCountInString(s[i:])
		}
		count++
	}
	return s, 0
}

// countLines counts lines as an editor would: a final line without a
// newline still counts, a trailing newline does not start another.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// plural formats n with a noun, adding "s" unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// cancelled wraps ctx's error so a caller sees which tool stopped.
func cancelled(ctx context.Context, name string) error {
	return fmt.Errorf("%s: %w", name, context.Cause(ctx))
}

// fsFailure explains a filesystem failure the model can act on (missing,
// forbidden, not a directory) as an error result, and returns any other as
// an error.
func fsFailure(verb, path string, err error) (tool.Result, error) {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return tool.Errorf("Permission denied: cannot %s %s.", verb, path), nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrExist), errors.Is(err, syscall.ENOTDIR):
		return tool.Errorf("Cannot %s %s: %v.", verb, path, err), nil
	}
	return tool.Result{}, fmt.Errorf("%s %s: %w", verb, path, err)
}

// walkTree walks the directory root depth-first in lexical order, calling
// visit for everything below it with its path (under root as given, even
// when root is a symlink), where it really is (under root resolved), and
// its slash-separated path relative to root. Symbolic links below root are
// reported, never followed. Unreadable subdirectories are skipped rather
// than failing the walk; visit may return fs.SkipDir for a directory. The
// walk stops when ctx is done.
func walkTree(ctx context.Context, root string, visit func(path, real, rel string, d fs.DirEntry) error) error {
	resolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(resolved, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p == resolved {
			return err
		}
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(resolved, p)
		if err != nil {
			return err
		}
		return visit(filepath.Join(root, rel), p, filepath.ToSlash(rel), d)
	})
}

// shown reports whether a search or listing may show the entry at path
// (real: where it really is; d: its entry, when known). Env.Readable must
// accept it under both names and, for a symbolic link, where the link
// leads: a link is no way round a rule that hides its target.
func shown(env tool.Env, path, real string, d fs.DirEntry) bool {
	if env.Readable == nil {
		return true
	}
	if !env.Readable(path) || (real != path && !env.Readable(real)) {
		return false
	}
	if d != nil && d.Type()&fs.ModeSymlink != 0 {
		if dest, err := filepath.EvalSymlinks(real); err == nil {
			return env.Readable(dest)
		}
	}
	return true
}
