package permission

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/tool"
)

// maxLinkHops bounds how many symbolic links resolvePath follows, as the
// kernel's ELOOP does, so that a loop of links ends.
const maxLinkHops = 40

// resolvePath returns the absolute, clean path with every symbolic link
// resolved, including links whose target does not exist yet: for a path
// that does not exist, its nearest existing ancestor is resolved and the
// rest joined on, following any dangling link on the way, so a new file
// is judged where it would really be written.
func resolvePath(path string) string {
	hops := 0
	return resolveHops(filepath.Clean(path), &hops)
}

func resolveHops(path string, hops *int) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	parent := filepath.Dir(path)
	if parent == path {
		return path
	}
	full := filepath.Join(resolveHops(parent, hops), filepath.Base(path))
	fi, err := os.Lstat(full)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 || *hops >= maxLinkHops {
		return full
	}
	*hops++
	dest, err := os.Readlink(full)
	if err != nil {
		return full
	}
	if !filepath.IsAbs(dest) {
		// The parent is resolved, so ".." in dest is applied where the
		// kernel would apply it.
		dest = filepath.Join(filepath.Dir(full), dest)
	}
	return resolveHops(filepath.Clean(dest), hops)
}

// protectedNames are the directories whose files steer cadre, git or
// another agent tool that may run in the same project.
var protectedNames = [...]struct{ name, holds string }{
	{".git", "the repository's configuration and hooks, which git runs"},
	{".cadre", "cadre's settings, agents and commands"},
	{".claude", "Claude Code's settings, agents and commands"},
	{".opencode", "OpenCode's configuration and agents"},
}

// mcpConfig is the file that says which MCP servers get started.
const mcpConfig = ".mcp.json"

// protected reports whether changing path (absolute, clean) needs the
// user's approval whatever the mode and the allow rules, and says why:
//
//   - a path component named .git, .cadre, .claude or .opencode, or a base
//     name .mcp.json (ignoring case, as some file systems do), judged
//     below the workspace or project root that holds the path (the
//     deepest), so that a worktree child's checkout under
//     <repo>/.git/cadre-worktrees/ is its own but its .git file is not;
//     a path outside both is judged whole;
//   - anything in ConfigDirs or in Home's .cadre and .claude.
//
// Both the path as given and where its symbolic links lead are judged.
func (p *Policy) protected(path string) (string, bool) {
	for _, w := range p.Writable {
		// Both as written and with links resolved: a link planted in the
		// directory must not lift the protection of what it points to.
		if w != "" && within(filepath.Clean(w), path) && within(resolvePath(w), resolvePath(path)) {
			return "", false
		}
	}
	if why, ok := p.protectedAs(path, func(s string) string { return s }); ok {
		return why, true
	}
	if real := resolvePath(path); real != path {
		return p.protectedAs(real, resolvePath)
	}
	return "", false
}

// protectedAs judges path against the roots and config dirs mapped by
// norm (identity for the path as given, resolvePath for a resolved one).
func (p *Policy) protectedAs(path string, norm func(string) string) (string, bool) {
	dirs := slices.Clone(p.ConfigDirs)
	if p.Home != "" {
		dirs = append(dirs, filepath.Join(p.Home, ".cadre"), filepath.Join(p.Home, ".claude"))
	}
	for _, d := range dirs {
		if d != "" && within(norm(filepath.Clean(d)), path) {
			return fmt.Sprintf("lies in the user's configuration directory %s", d), true
		}
	}
	rel, best := path, ""
	for _, r := range []string{p.Workspace, p.Project} {
		if r == "" {
			continue
		}
		r = norm(filepath.Clean(r))
		if within(r, path) && len(r) > len(best) {
			best = r
		}
	}
	if best != "" {
		rel, _ = filepath.Rel(best, path)
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, part := range parts {
		for _, n := range protectedNames {
			if strings.EqualFold(part, n.name) {
				return fmt.Sprintf("lies in a %s directory, which holds %s", n.name, n.holds), true
			}
		}
		if i == len(parts)-1 && strings.EqualFold(part, mcpConfig) {
			return "is a " + mcpConfig + " file, which says which MCP servers get started", true
		}
	}
	return "", false
}

// askProtected asks for a change of a protected path. No rule can approve
// it, so the denial with nobody to ask says so rather than pointing to
// permissions.allow.
func (p *Policy) askProtected(ctx context.Context, c call, env tool.Env, input json.RawMessage, why string) error {
	reason := fmt.Sprintf("%s changes %s, which %s; such a change always needs the user's approval, whatever the permission mode or allow rules",
		c.name, c.target, why)
	if p.Asker == nil || !p.Mode.asks() {
		return &Denied{Tool: c.name, Target: c.target, Reason: fmt.Sprintf("this call requires approval (%s) and nobody can approve it in this session; "+
			"do not retry it, but tell the user: only their approval in an interactive session, or bypassPermissions mode, can allow it", reason)}
	}
	return p.ask(ctx, c, env, input, reason)
}

// ReadFilter returns the Env.Readable of one permitted call of the read
// tool t called name: it rejects a path that a deny rule with a path
// specifier covering the tool names (an ask rule too, except in
// bypassPermissions), since a search or listing cannot ask about each
// file it shows. The rules are anchored and their links resolved once,
// here; the function then only matches patterns, and is safe for
// concurrent use. It is nil when no such rule applies or t does not read.
//
// The function is given absolute paths; a walker passes both the path it
// shows and where it really is, since only the rules' own links are
// resolved here.
func (p *Policy) ReadFilter(name string, t tool.Tool, env tool.Env) func(path string) bool {
	if t == nil || t.Info().Access != tool.AccessRead {
		return nil
	}
	c := call{name: name, access: tool.AccessRead, cwd: env.Cwd}
	var pats []globPattern
	add := func(rules []Rule, l list) {
		for _, r := range rules {
			if r.bare() || !r.covers(c, l) {
				continue
			}
			as, err := p.pathPatterns(r.Specifier, c.cwd)
			if err != nil {
				// Permit denied or asked for the whole call already.
				continue
			}
			for _, a := range as {
				for _, g := range []globPattern{a.literal, a.resolved} {
					if !slices.Contains(pats, g) {
						pats = append(pats, g)
					}
				}
			}
		}
	}
	add(p.Rules.Deny, listDeny)
	if p.Mode != ModeBypass {
		add(p.Rules.Ask, listAsk)
	}
	if len(pats) == 0 {
		return nil
	}
	return func(path string) bool {
		path = filepath.ToSlash(filepath.Clean(path))
		for _, g := range pats {
			if g.covers(path) {
				return false
			}
		}
		return true
	}
}
