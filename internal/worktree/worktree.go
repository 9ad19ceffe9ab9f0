package worktree

import (
	"context"
	"errors"
	"fmt"
	"github.com/cadre-dev/cadre/internal/ids"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const (
	// stateDirName is the directory, inside the repository's common git
	// dir, that holds every cadre worktree of that repository.
	stateDirName = "cadre-worktrees"
	// branchPrefix namespaces the branches so they are easy to recognise
	// (and to clean up) in the user's branch list.
	branchPrefix = "cadre/"
	// baseFile, in a worktree's admin directory, records the commit it
	// started from; git deletes it together with the worktree.
	baseFile = "cadre-base"
	// finishTimeout bounds Finish, which runs after the caller's context
	// may already be cancelled.
	finishTimeout = 30 * time.Second
	maxNameLen    = ids.MaxLen
)

// Errors Create and Sweep wrap, for callers that branch on the cause.
var (
	ErrInvalidName = errors.New("invalid worktree name")
	ErrGitMissing  = errors.New("git not found")
	ErrNotRepo     = errors.New("not in a git repository")
	ErrNoCommits   = errors.New("repository has no commits")
	ErrExists      = errors.New("worktree already exists")
)

// kindError carries a full message of its own while matching one of the
// sentinel errors above with errors.Is.
type kindError struct {
	msg   string
	kind  error
	cause error
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }
func (e *kindError) Unwrap() error        { return e.cause }

func kindErr(kind, cause error, format string, args ...any) error {
	return &kindError{msg: fmt.Sprintf(format, args...), kind: kind, cause: cause}
}

// Tree is a worktree made for one subagent run.
type Tree struct {
	Repo   string // the repository's top level (of the worktree cwd was in)
	Path   string // the worktree directory
	Branch string // "cadre/<name>"
	Base   string // the commit it started from (HEAD of cwd's worktree); empty if unknown
}

// Outcome is what Finish found and did.
type Outcome struct {
	Kept         bool // true when something changed: the worktree and branch stay
	Path, Branch string
	Commits      int    // commits on the branch beyond Base
	Dirty        bool   // uncommitted changes (tracked or untracked, ignored files aside)
	Summary      string // one line for the model and the user
}

// validName reports whether name is 1 to 128 of [A-Za-z0-9_-], which keeps
// it a single path element and a valid ref component.
func validName(name string) bool { return ids.Check(name, ErrInvalidName) == nil }

// location is where cwd sits in its repository.
type location struct {
	top    string // top level of cwd's worktree
	common string // the common git dir, absolute
}

func (l location) stateDir() string { return filepath.Join(l.common, stateDirName) }

// locate finds the repository cwd is in, with the clear errors Create and
// Sweep promise.
func locate(ctx context.Context, cwd string) (location, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return location{}, kindErr(ErrGitMissing, err, "isolation \"worktree\" runs git, and none was found on PATH: %v", err)
	}
	fi, err := os.Stat(cwd)
	if err != nil {
		return location{}, fmt.Errorf("worktree: working directory %s: %w", cwd, err)
	}
	if !fi.IsDir() {
		return location{}, fmt.Errorf("worktree: working directory %s is not a directory", cwd)
	}
	out, err := git(ctx, cwd, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir")
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) {
			switch {
			case strings.Contains(ge.stderr, "not a git repository"):
				return location{}, kindErr(ErrNotRepo, err, "isolation \"worktree\" needs a git repository, and %s is not inside one", cwd)
			case strings.Contains(ge.stderr, "must be run in a work tree"):
				return location{}, kindErr(ErrNotRepo, err, "isolation \"worktree\" needs a git work tree, and %s is in a bare repository or a .git directory", cwd)
			}
		}
		return location{}, fmt.Errorf("worktree: finding the git repository of %s: %w", cwd, err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 || lines[0] == "" || lines[1] == "" {
		return location{}, fmt.Errorf("worktree: unexpected output from git rev-parse in %s: %q", cwd, out)
	}
	loc := location{top: lines[0], common: filepath.Clean(lines[1])}
	if err := ownGitDir(loc.top); err != nil {
		return location{}, err
	}
	return loc, nil
}

// ownGitDir checks that top/.git is the project's own: a directory, or a
// .git file naming a git dir that names top back — git's own link for a
// linked worktree (<gitdir>/gitdir) or a submodule's (core.worktree read
// as the super-project's modules/ entry below a directory holding top). A
// .git file or link naming another repository would have a worktree child
// check out, read and write that one (issue 22).
func ownGitDir(top string) error {
	dotgit := filepath.Join(top, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return fmt.Errorf("worktree: %s: %w", dotgit, err)
	}
	switch {
	case fi.IsDir():
		return nil
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("worktree: %s is a symbolic link: isolation \"worktree\" uses only a project's own git directory", dotgit)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("worktree: %s is neither a directory nor a .git file", dotgit)
	}
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	named, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return fmt.Errorf("worktree: %s does not name a git directory (want \"gitdir: <path>\")", dotgit)
	}
	gitdir := strings.TrimSpace(named)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(top, gitdir)
	}
	gitdir = filepath.Clean(gitdir)
	same := func(a, b string) bool {
		ra, err1 := filepath.EvalSymlinks(a)
		rb, err2 := filepath.EvalSymlinks(b)
		return err1 == nil && err2 == nil && ra == rb
	}
	// A linked worktree: git wrote top's .git file's path into
	// <gitdir>/gitdir.
	if back, err := os.ReadFile(filepath.Join(gitdir, "gitdir")); err == nil {
		p := strings.TrimSpace(string(back))
		if !filepath.IsAbs(p) {
			p = filepath.Join(gitdir, p)
		}
		if same(p, dotgit) {
			return nil
		}
	}
	// A submodule: <super>/.git/modules/<name…>, super holding top.
	if i := strings.Index(gitdir, string(filepath.Separator)+".git"+string(filepath.Separator)+"modules"+string(filepath.Separator)); i >= 0 {
		super := gitdir[:i]
		if rel, err := filepath.Rel(super, top); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil
		}
	}
	return fmt.Errorf("worktree: %s names %s, which is not this project's own git directory (it does not name %s back): isolation \"worktree\" refuses it", dotgit, gitdir, top)
}

// Create makes a worktree for the run name (an agent id) on a new branch
// cadre/<name>, at the HEAD of the worktree cwd is in, in
// <git-common-dir>/cadre-worktrees/<name>.
func Create(ctx context.Context, cwd, name string) (*Tree, error) {
	if !validName(name) {
		return nil, kindErr(ErrInvalidName, nil, "worktree name %q is invalid: want 1 to %d letters, digits, '_' or '-'", name, maxNameLen)
	}
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	loc, err := locate(ctx, cwd)
	if err != nil {
		return nil, err
	}
	base, ok, err := refCommit(ctx, loc.top, "HEAD")
	if err != nil {
		return nil, fmt.Errorf("worktree: reading HEAD of %s: %w", loc.top, err)
	}
	if !ok {
		return nil, kindErr(ErrNoCommits, nil, "isolation \"worktree\" needs a commit to start from, and the repository at %s has none yet", loc.top)
	}
	t := &Tree{
		Repo:   loc.top,
		Path:   filepath.Join(loc.stateDir(), name),
		Branch: branchPrefix + name,
		Base:   base,
	}
	if _, err := os.Lstat(t.Path); err == nil {
		return nil, kindErr(ErrExists, nil, "worktree %s already exists (left by an earlier run?)", t.Path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("worktree: checking %s: %w", t.Path, err)
	}
	if _, exists, err := refCommit(ctx, loc.top, "refs/heads/"+t.Branch); err != nil {
		return nil, fmt.Errorf("worktree: checking branch %s: %w", t.Branch, err)
	} else if exists {
		return nil, kindErr(ErrExists, nil, "branch %s already exists in %s (left by an earlier run?)", t.Branch, loc.top)
	}
	if err := os.MkdirAll(loc.stateDir(), 0o755); err != nil {
		return nil, fmt.Errorf("worktree: making %s: %w", loc.stateDir(), err)
	}
	// The checkout is a command of its own, run in the new tree: what
	// configuration applies there (an includeIf on its git dir or branch)
	// is only known once it exists, and git would otherwise check out from
	// the main tree's point of view (see filterDrivers).
	if _, err := git(ctx, loc.top, "worktree", "add", "--quiet", "--no-checkout", "-b", t.Branch, t.Path, base); err != nil {
		t.undoCreate(ctx)
		return nil, fmt.Errorf("worktree: creating %s on branch %s: %w", t.Path, t.Branch, err)
	}
	if _, err := git(ctx, t.Path, "reset", "--hard", "--quiet", "--no-recurse-submodules"); err != nil {
		t.undoCreate(ctx)
		return nil, fmt.Errorf("worktree: checking out %s in %s: %w", base, t.Path, err)
	}
	// Best effort: only Sweep reads the record, and a tree without it is
	// still usable (Finish then keeps it, as it cannot tell what changed).
	if adminDir, err := git(ctx, t.Path, "rev-parse", "--absolute-git-dir"); err == nil {
		_ = os.WriteFile(filepath.Join(strings.TrimSpace(adminDir), baseFile), []byte(base+"\n"), 0o644)
	}
	return t, nil
}

// undoCreate removes what a failed `git worktree add` may have left: the
// directory, its registration and the branch (which did not exist before).
func (t *Tree) undoCreate(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	_ = os.RemoveAll(t.Path)
	_, _ = git(ctx, t.Repo, "worktree", "prune")
	if _, exists, _ := refCommit(ctx, t.Repo, "refs/heads/"+t.Branch); exists {
		_, _ = git(ctx, t.Repo, "branch", "-D", t.Branch)
	}
}

// Rel maps cwd (inside the original worktree) to the same place inside
// t.Path, so a child started in a subdirectory keeps its place. A directory
// the new checkout lacks (one holding only untracked or ignored files) maps
// to its nearest existing parent; a cwd outside the repository maps to t.Path.
func (t *Tree) Rel(cwd string) string {
	rel, ok := relInside(t.Repo, cwd)
	if !ok {
		// git reports the top level with symlinks resolved; cwd may not be.
		if real, err := filepath.EvalSymlinks(cwd); err == nil {
			rel, ok = relInside(t.Repo, real)
		}
	}
	if !ok {
		return t.Path
	}
	for p := filepath.Join(t.Path, rel); p != t.Path && strings.HasPrefix(p, t.Path); p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
	}
	return t.Path
}

func relInside(base, target string) (string, bool) {
	rel, err := filepath.Rel(base, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// Finish applies the keep/remove rule: with no new commits and a clean
// status the worktree and its branch are removed; otherwise both are kept
// and reported. It uses its own bounded context, so it works after the run's
// context was cancelled, and calling it again is safe.
func (t *Tree) Finish(ctx context.Context) (Outcome, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	out := Outcome{Path: t.Path, Branch: t.Branch}
	name, ok := strings.CutPrefix(t.Branch, branchPrefix)
	if !ok || !validName(name) || filepath.Base(t.Path) != name || filepath.Base(filepath.Dir(t.Path)) != stateDirName {
		// Guards the removals below against a hand-made Tree pointing elsewhere.
		return out, fmt.Errorf("worktree: %s on branch %s is not a cadre worktree", t.Path, t.Branch)
	}

	entries, err := listWorktrees(ctx, t.Repo)
	if err != nil {
		out.Kept = true
		return out, fmt.Errorf("worktree: listing worktrees of %s: %w", t.Repo, err)
	}
	var entry *listEntry
	for i := range entries {
		if samePath(entries[i].path, t.Path) {
			entry = &entries[i]
			break
		}
	}
	_, statErr := os.Lstat(t.Path)
	present := statErr == nil

	if !present && entry != nil {
		// The directory went away but git still lists it: drop the stale
		// registration so the branch can be deleted and the name reused.
		if entry.locked {
			_, _ = git(ctx, t.Repo, "worktree", "unlock", t.Path)
		}
		if _, err := git(ctx, t.Repo, "worktree", "prune"); err != nil {
			out.Kept = true
			return out, fmt.Errorf("worktree: pruning the missing worktree %s: %w", t.Path, err)
		}
		entry = nil
	}
	if present && entry == nil {
		out.Kept = true
		out.Summary = fmt.Sprintf("kept %s: it is not a registered git worktree, so its changes cannot be checked", t.Path)
		return out, fmt.Errorf("worktree: %s exists but git does not list it as a worktree of %s", t.Path, t.Repo)
	}

	tip, branchExists, err := refCommit(ctx, t.Repo, "refs/heads/"+t.Branch)
	if err != nil {
		out.Kept = true
		return out, fmt.Errorf("worktree: reading branch %s: %w", t.Branch, err)
	}
	var moved []string // why the tree counts as changed beyond commits and status
	if present {
		// --ignore-submodules=dirty: a checked-out submodule is a repository
		// with a configuration of its own, which git would run status in;
		// submoduleReasons keeps such a tree instead.
		status, err := git(ctx, t.Path, "status", "--porcelain", "-z", "--untracked-files=normal", "--ignore-submodules=dirty")
		if err != nil {
			out.Kept = true
			return out, fmt.Errorf("worktree: checking for changes in %s: %w", t.Path, err)
		}
		out.Dirty = status != ""
		subs, err := submoduleReasons(ctx, t.Path)
		if err != nil {
			out.Kept = true
			return out, fmt.Errorf("worktree: checking the submodules of %s: %w", t.Path, err)
		}
		moved = append(moved, subs...)
		head, _, err := refCommit(ctx, t.Path, "HEAD")
		if err != nil {
			out.Kept = true
			return out, fmt.Errorf("worktree: reading HEAD of %s: %w", t.Path, err)
		}
		// Commits on the branch are counted below; this catches a HEAD
		// detached or switched elsewhere.
		if t.Base != "" && head != t.Base && (!branchExists || head != tip) {
			moved = append(moved, "HEAD moved")
		}
	}
	if branchExists && t.Base != "" && tip != t.Base {
		n, err := git(ctx, t.Repo, "rev-list", "--count", t.Base+".."+tip)
		if err != nil {
			out.Kept = true
			return out, fmt.Errorf("worktree: counting commits on %s: %w", t.Branch, err)
		}
		if _, err := fmt.Sscan(n, &out.Commits); err != nil {
			out.Kept = true
			return out, fmt.Errorf("worktree: counting commits on %s: unexpected %q", t.Branch, n)
		}
		if out.Commits == 0 {
			moved = append(moved, "branch moved")
		}
	}
	if t.Base == "" && (present || branchExists) {
		moved = append(moved, "starting commit unknown")
	}
	if present && entry.locked {
		moved = append(moved, "worktree locked")
	}

	if out.Dirty || out.Commits > 0 || len(moved) > 0 {
		out.Kept = true
		out.Summary = keptSummary(out, present, branchExists, moved)
		return out, nil
	}
	if err := t.remove(ctx, present, branchExists); err != nil {
		out.Kept = true
		out.Summary = fmt.Sprintf("no changes, but removing worktree %s failed", t.Path)
		return out, err
	}
	out.Summary = "no changes; worktree removed"
	return out, nil
}

// submoduleReasons names the submodules of the tree at dir (those
// .gitmodules lists) whose directory is not empty: their state is not
// inspected (see Finish), so they are a reason to keep the tree.
func submoduleReasons(ctx context.Context, dir string) ([]string, error) {
	if _, err := os.Lstat(filepath.Join(dir, ".gitmodules")); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	env, err := gitEnv(fixedOverrides())
	if err != nil {
		return nil, err
	}
	// Reading a file of configuration syntax runs nothing, and --file does
	// not follow its includes.
	out, err := run(ctx, dir, env, "config", "--file", ".gitmodules", "-z", "--get-regexp", `^submodule\..*\.path$`)
	if err != nil {
		if exitCode(err) == 1 { // no submodule paths
			return nil, nil
		}
		return nil, err
	}
	var reasons []string
	for _, entry := range strings.Split(out, "\x00") {
		_, path, ok := strings.Cut(entry, "\n")
		if !ok || path == "" {
			continue
		}
		full := filepath.Join(dir, path)
		if _, inside := relInside(dir, full); !inside || full == dir {
			continue
		}
		if !nonEmptyDir(full) {
			continue // not there, or not checked out
		}
		if _, err := os.Lstat(filepath.Join(full, ".git")); err == nil {
			reasons = append(reasons, "submodule "+path+" checked out")
		} else {
			reasons = append(reasons, "files in submodule directory "+path)
		}
	}
	return reasons, nil
}

// nonEmptyDir reports whether path is a directory (not a symlink to one)
// with at least one entry.
func nonEmptyDir(path string) bool {
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) > 0
}

// remove deletes an unchanged worktree and its branch.
func (t *Tree) remove(ctx context.Context, present, branchExists bool) error {
	if present {
		if _, err := git(ctx, t.Repo, "worktree", "remove", "--force", t.Path); err != nil {
			// git refuses some trees (one with initialised submodules, say);
			// delete the directory ourselves and drop its registration.
			if rmErr := os.RemoveAll(t.Path); rmErr != nil {
				_, _ = git(ctx, t.Repo, "worktree", "prune")
				return fmt.Errorf("worktree: removing %s: %w (after git failed: %w)", t.Path, rmErr, err)
			}
			if _, err := git(ctx, t.Repo, "worktree", "prune"); err != nil {
				return fmt.Errorf("worktree: unregistering the removed %s: %w", t.Path, err)
			}
		}
	}
	if branchExists {
		if _, err := git(ctx, t.Repo, "branch", "-D", t.Branch); err != nil {
			return fmt.Errorf("worktree: deleting branch %s: %w", t.Branch, err)
		}
	}
	// Tidy the state dir once its last tree is gone; fails harmlessly if not.
	_ = os.Remove(filepath.Dir(t.Path))
	return nil
}

func keptSummary(o Outcome, present, branchExists bool, moved []string) string {
	var parts []string
	switch {
	case o.Commits == 1:
		parts = append(parts, "1 commit")
	case o.Commits > 1:
		parts = append(parts, fmt.Sprintf("%d commits", o.Commits))
	}
	if o.Dirty {
		parts = append(parts, "uncommitted changes")
	}
	parts = append(parts, moved...)
	detail := ""
	if len(parts) > 0 {
		detail = " (" + strings.Join(parts, ", ") + ")"
	}
	switch {
	case present:
		return fmt.Sprintf("changes kept in worktree %s on branch %s%s", o.Path, o.Branch, detail)
	case branchExists:
		return fmt.Sprintf("changes kept on branch %s%s; the worktree directory %s is gone", o.Branch, detail, o.Path)
	default:
		return "worktree and branch are already gone"
	}
}

// samePath compares two paths, resolving symlinks when they differ as given.
func samePath(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if a == b {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// Sweep lists the cadre worktrees git has registered for the repository at
// cwd, for reporting the ones a crashed process left behind. Finish on a
// returned Tree applies the usual keep/remove rule; a tree whose starting
// commit was not recorded is always kept.
func Sweep(ctx context.Context, cwd string) ([]Tree, error) {
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	switch common, found := commonDir(cwd); {
	case !found:
		return nil, kindErr(ErrNotRepo, nil, "%s is not inside a git repository", cwd)
	case common != "":
		if _, err := os.Stat(filepath.Join(common, stateDirName)); errors.Is(err, fs.ErrNotExist) {
			// cadre never made a worktree here: nothing to report, and no
			// git to start on the way to the first model request.
			return nil, nil
		}
	}
	loc, err := locate(ctx, cwd)
	if err != nil {
		return nil, err
	}
	entries, err := listWorktrees(ctx, loc.top)
	if err != nil {
		return nil, fmt.Errorf("worktree: listing worktrees of %s: %w", loc.top, err)
	}
	var trees []Tree
	for _, e := range entries {
		if !samePath(filepath.Dir(e.path), loc.stateDir()) || !validName(filepath.Base(e.path)) {
			continue
		}
		// The branch is the one Create made, even if the tree has since
		// switched away from it: that is what Finish manages.
		t := Tree{Repo: loc.top, Path: e.path, Branch: branchPrefix + filepath.Base(e.path)}
		if adminDir, err := git(ctx, e.path, "rev-parse", "--absolute-git-dir"); err == nil {
			if b, err := os.ReadFile(filepath.Join(strings.TrimSpace(adminDir), baseFile)); err == nil {
				t.Base = strings.TrimSpace(string(b))
			}
		}
		trees = append(trees, t)
	}
	return trees, nil
}

// commonDir finds, without running git, the common git directory of the
// repository dir is in, the way git discovers it: the nearest ".git" up
// the tree, a directory, or a file "gitdir: X" whose X holds a "commondir"
// file (a linked worktree) or is itself the common directory. found is
// false when no ".git" exists up to the root; common is "" when one
// exists but cannot be read (git then decides).
func commonDir(dir string) (common string, found bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		dotGit := filepath.Join(d, ".git")
		if fi, err := os.Stat(dotGit); err == nil {
			if fi.IsDir() {
				return dotGit, true
			}
			return linkedCommonDir(d, dotGit), true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// linkedCommonDir reads a ".git" file of the worktree top; "" when it is
// not what git writes.
func linkedCommonDir(top, dotGit string) string {
	b, err := os.ReadFile(dotGit)
	if err != nil {
		return ""
	}
	gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	gitDir = strings.TrimSpace(gitDir)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(top, gitDir)
	}
	c, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if errors.Is(err, fs.ErrNotExist) {
		return gitDir // a submodule's or a separate git dir: it is its own common dir
	} else if err != nil {
		return ""
	}
	common := strings.TrimSpace(string(c))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitDir, common)
	}
	return filepath.Clean(common)
}
