package permission

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/cadre-dev/cadre/internal/permission/shellcmd"
	"github.com/cadre-dev/cadre/tool"
)

// Family rule names: a rule for one of these covers every tool of that
// access, so Read(secrets/**) also keeps Grep and Glob out of secrets/.
const (
	familyRead = "Read"
	familyEdit = "Edit"
)

func isPathFamily(name string) bool { return name == familyRead || name == familyEdit }

// call is what the rules of one Permit are matched against.
type call struct {
	name   string
	access tool.Access
	target string // absolute path for file tools, the command for exec tools
	// resolved is target with its symbolic links resolved (file tools).
	resolved string
	cwd      string // where relative paths start when nothing else is set
	// rememberable: an "allow for this session" rule could approve such
	// calls from now on, so the question carries suggestions.
	rememberable bool
	// approval receives the input the approver changed the call to, if
	// it did.
	approval *json.RawMessage
	// tool is the called tool, nil when the question is not about one.
	tool tool.Tool
}

// list says which rule list a rule comes from; allow rules match compound
// commands more strictly than deny and ask rules.
type list int

const (
	listAllow list = iota
	listAsk
	listDeny
)

// namesTool reports whether the rule's tool part names the tool: literally,
// by wildcard ("mcp__srv__*"), as a whole MCP server ("mcp__srv"), or by
// the Agent/Task alias. Access families are not considered here.
//
// Rules of the deny and ask lists name tools ignoring case, whoever wrote
// them (settings, an agent file, the SDK): "--disallowedTools bash" must
// not fail open. Allow rules match exactly, since reading a grant more
// widely than written is the unsafe direction.
func (r Rule) namesTool(name string, l list) bool {
	ruleTool := r.Tool
	if l != listAllow {
		ruleTool, name = strings.ToLower(ruleTool), strings.ToLower(name)
	}
	if canonicalTool(ruleTool) == canonicalTool(name) {
		return true
	}
	if whole, ok := strings.CutSuffix(ruleTool, "__*"); ok && l == listAllow && strings.HasPrefix(whole, "mcp__") && !strings.ContainsAny(whole, "*") {
		ruleTool = whole // mcp__gh__* grants what mcp__gh grants, no more
	} else if strings.Contains(ruleTool, "*") && wildcard(ruleTool, name) {
		return true
	}
	if server, ok := strings.CutPrefix(ruleTool, "mcp__"); ok && server != "" && !strings.Contains(server, "__") {
		tool, ok := strings.CutPrefix(name, ruleTool+"__")
		if !ok || tool == "" {
			return false
		}
		// A name does not say where the server's name ends: mcp__gh__evil__x
		// is gh's tool evil__x or server gh__evil's tool x. A grant reads
		// it the narrow way (issue 22: --allowedTools mcp__gh must not allow
		// a server named gh__evil); a deny or ask rule the wide way.
		return l != listAllow || !strings.Contains(tool, "__")
	}
	return false
}

// canonicalTool folds tool-name aliases that rules treat as one tool.
func canonicalTool(name string) string {
	switch name {
	case "Task":
		// Claude Code renamed Task to Agent; Task(...) rules still apply.
		return "Agent"
	case "task":
		return "agent" // the same, case folded
	}
	return name
}

// covers reports whether the rule's tool part, from list l, applies to the
// call: it names the tool, or it is the Read/Edit family rule of the
// call's access.
func (r Rule) covers(c call, l list) bool {
	if r.namesTool(c.name, l) {
		return true
	}
	family := r.Tool
	if l != listAllow {
		family = familyName(family)
	}
	switch family {
	case familyRead:
		return c.access == tool.AccessRead
	case familyEdit:
		return c.access == tool.AccessEdit
	}
	return false
}

// familyName is the family rule name equal to name ignoring case, or name.
func familyName(name string) string {
	for _, f := range [...]string{familyRead, familyEdit} {
		if strings.EqualFold(name, f) {
			return f
		}
	}
	return name
}

// matches reports whether r, taken from list l, applies to the call.
func (p *Policy) matches(r Rule, c call, l list) bool {
	if !r.covers(c, l) {
		return false
	}
	if r.bare() {
		return true
	}
	if c.target == "" {
		// Nothing for a specifier to match: the tool names no target.
		return false
	}
	switch matcherFor(c) {
	case matchCommand:
		return matchCommandRule(r.Specifier, c.target, l)
	case matchPath:
		m, err := p.matchPath(r.Specifier, c, l)
		if err != nil {
			// A malformed pattern fails closed: it never allows, but a
			// deny or ask rule still holds.
			return l != listAllow
		}
		return m
	default:
		if host, ok := strings.CutPrefix(r.Specifier, "domain:"); ok {
			// A host is a host whatever its case or a root's trailing dot:
			// WebFetch(domain:x) must not miss "x." (issue 22).
			target, _ := strings.CutPrefix(c.target, "domain:")
			return strings.HasPrefix(c.target, "domain:") && wildcard(NormalizeHost(host), NormalizeHost(target))
		}
		return wildcard(r.Specifier, c.target)
	}
}

// NormalizeHost is the form domain rules compare hosts in: lower case,
// without the trailing dots of a fully qualified name.
func NormalizeHost(h string) string { return strings.ToLower(strings.TrimRight(h, ".")) }

type matcher int

const (
	matchGeneric matcher = iota
	matchCommand
	matchPath
)

// matcherFor picks how specifiers match the call's target. This is the
// hook for tool-specific specifier semantics. Agent(name)/Task(name) rules
// match generically here, against whatever target the tool reports; the
// spawn decision itself is PermitSpawn's, which matches them by agent name.
func matcherFor(c call) matcher {
	switch c.access {
	case tool.AccessExec:
		return matchCommand
	case tool.AccessRead, tool.AccessEdit:
		return matchPath
	}
	return matchGeneric
}

// matchCommandRule matches a Bash specifier against a command line; see
// commandMatches. Permit analyses a command once for all its rules.
func matchCommandRule(spec, command string, l list) bool {
	return commandMatches(shellcmd.Analyze(command), spec, l)
}

// commandMatches reports whether a Bash specifier from list l applies to
// the analysed command. Allow rules must match every simple command as
// written, and never match what cannot be read or holds a substitution;
// deny and ask rules apply when they match any form of any command.
func commandMatches(a *shellcmd.Analysis, spec string, l list) bool {
	if l == listAllow {
		return commandApproved(a, []string{spec})
	}
	spec = shellcmd.CollapseSpace(spec)
	for _, text := range a.Looks {
		if matchCommandPart(spec, text) {
			return true
		}
	}
	return false
}

// commandApproved reports whether allow rules approve every simple
// command as written, each command by some rule: "ls && echo ok" is
// approved by Bash(ls:*) and Bash(echo:*) together. What cannot be read,
// or holds a substitution, is never approved by a specifier.
func commandApproved(a *shellcmd.Analysis, specs []string) bool {
	if len(a.Opaque) > 0 || a.Subst || len(a.Written) == 0 {
		return false
	}
	for _, text := range a.Written {
		ok := false
		for _, spec := range specs {
			if matchCommandPart(shellcmd.CollapseSpace(spec), text) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// matchCommandPart matches one simple command: "cmd:*" and "cmd *" are
// prefixes ending at a word boundary, anything else is matched whole.
func matchCommandPart(spec, part string) bool {
	if part == "" {
		return false
	}
	if prefix, ok := strings.CutSuffix(spec, ":*"); ok {
		return wildcard(prefix, part) || wildcard(prefix+" *", part)
	}
	if prefix, ok := strings.CutSuffix(spec, " *"); ok && prefix != "" {
		return wildcard(prefix, part) || wildcard(spec, part)
	}
	return wildcard(spec, part)
}

// matchPathRule matches a gitignore-style path specifier against an
// absolute target, as a deny rule does.
func (p *Policy) matchPathRule(spec, target, cwd string) (bool, error) {
	target = filepath.Clean(target)
	return p.matchPath(spec, call{target: target, resolved: resolvePath(target), cwd: cwd}, listDeny)
}

// matchPath matches a path specifier against the call's target. Deny and
// ask rules match the path as given or where its symbolic links lead, so
// no second name slips past them; allow rules only where it leads, so a
// link planted under an allowed directory does not carry the allowance
// out of it.
func (p *Policy) matchPath(spec string, c call, l list) (bool, error) {
	pats, err := p.pathPatterns(spec, c.cwd)
	if err != nil {
		return false, err
	}
	target := filepath.ToSlash(filepath.Clean(c.target))
	resolved := target
	if c.resolved != "" {
		resolved = filepath.ToSlash(c.resolved)
	}
	for _, a := range pats {
		if l != listAllow && a.literal.covers(target) {
			return true, nil
		}
		if a.resolved.covers(resolved) {
			return true, nil
		}
	}
	return false, nil
}

// anchored is one absolute pattern of a path rule, as written and with its
// fixed leading directories resolved.
type anchored struct{ literal, resolved globPattern }

// globPattern is a validated doublestar pattern, and the pattern of what
// lies below what it names: a directory covers its contents. base is the
// pattern's fixed leading directory, which every match starts with: most
// paths of a search are ruled out by it without matching.
type globPattern struct{ self, below, base string }

func newGlob(pattern string) globPattern {
	base, _ := doublestar.SplitPattern(pattern)
	return globPattern{pattern, pattern + "/**", strings.TrimSuffix(unescapeMeta(base), "/")}
}

func (g globPattern) covers(path string) bool {
	if !strings.HasPrefix(path, g.base) {
		return false
	}
	return doublestar.MatchUnvalidated(g.self, path) || doublestar.MatchUnvalidated(g.below, path)
}

// pathPatterns anchors a path specifier: "//x" and "~/x" once, the others
// at each of the rule roots.
func (p *Policy) pathPatterns(spec, cwd string) ([]anchored, error) {
	var out []anchored
	for _, root := range p.ruleRoots(cwd) {
		pattern, ok := p.anchor(spec, root)
		if !ok {
			continue
		}
		if !doublestar.ValidatePattern(pattern) {
			// Match may stop before it reaches the bad part; check it all.
			return nil, doublestar.ErrBadPattern
		}
		a := anchored{literal: newGlob(pattern), resolved: newGlob(resolvePattern(pattern))}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// ruleRoots are where relative path rules start: the project, and the
// workspace when it is elsewhere; the cwd when neither is set.
func (p *Policy) ruleRoots(cwd string) []string {
	var roots []string
	for _, r := range []string{p.Project, p.Workspace} {
		if r != "" && !slices.Contains(roots, filepath.Clean(r)) {
			roots = append(roots, filepath.Clean(r))
		}
	}
	if len(roots) == 0 && cwd != "" {
		roots = append(roots, cwd)
	}
	if len(roots) == 0 {
		// "//x" and "~/x" need no root.
		roots = append(roots, "")
	}
	return roots
}

// anchor turns a rule's path pattern into an absolute doublestar pattern:
// "//x" is absolute, "~/x" under Home, anything else under root.
func (p *Policy) anchor(spec, root string) (string, bool) {
	spec = strings.TrimSuffix(spec, "/")
	switch {
	case strings.HasPrefix(spec, "//"):
		return spec[1:], true
	case spec == "~" || strings.HasPrefix(spec, "~/"):
		if p.Home == "" {
			return "", false
		}
		return joinPattern(p.Home, spec[1:]), true
	}
	if root == "" {
		return "", false
	}
	if strings.HasPrefix(spec, "/") {
		return joinPattern(root, spec), true
	}
	if rest, ok := strings.CutPrefix(spec, "./"); ok {
		return joinPattern(root, "/"+rest), true
	}
	if spec == "." {
		return joinPattern(root, ""), true
	}
	if !strings.Contains(spec, "/") {
		// gitignore: a pattern without a slash matches at any depth.
		return joinPattern(root, "/**/"+spec), true
	}
	return joinPattern(root, "/"+spec), true
}

// resolvePattern resolves the symbolic links in an absolute pattern's
// fixed leading directories, or in all of it when it has no wildcard.
func resolvePattern(pattern string) string {
	base, rest := doublestar.SplitPattern(pattern)
	if !hasMeta(rest) {
		return escapeMeta(filepath.ToSlash(resolvePath(unescapeMeta(pattern))))
	}
	dir := strings.TrimSuffix(escapeMeta(filepath.ToSlash(resolvePath(unescapeMeta(base)))), "/")
	return dir + "/" + rest
}

// hasMeta reports whether a pattern has an unescaped wildcard.
func hasMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[', '{':
			return true
		}
	}
	return false
}

func unescapeMeta(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// joinPattern puts a pattern tail (empty or starting with "/") under a
// literal directory, escaping the directory's glob metacharacters.
func joinPattern(dir, tail string) string {
	dir = strings.TrimSuffix(filepath.ToSlash(filepath.Clean(dir)), "/")
	return escapeMeta(dir) + tail
}

func escapeMeta(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '*', '?', '[', ']', '{', '}', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// wildcard matches s against pattern, where "*" matches any run of
// characters (slashes and spaces included) and "\*" a literal star.
func wildcard(pattern, s string) bool {
	// Iterative matcher with one backtrack point: linear in practice and
	// never exponential, whatever the pattern.
	var (
		pi, si       int
		starP, starS = -1, 0
	)
	for si < len(s) {
		if pi < len(pattern) {
			switch c := pattern[pi]; {
			case c == '*':
				starP, starS = pi, si
				pi++
				continue
			case c == '\\' && pi+1 < len(pattern):
				if pattern[pi+1] == s[si] {
					pi += 2
					si++
					continue
				}
			case c == s[si]:
				pi++
				si++
				continue
			}
		}
		if starP < 0 {
			return false
		}
		pi = starP + 1
		starS++
		si = starS
	}
	for pi < len(pattern) && pattern[pi] == '*' {
		pi++
	}
	return pi == len(pattern)
}
