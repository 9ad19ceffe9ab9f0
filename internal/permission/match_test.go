package permission

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/permission/shellcmd"
	"github.com/cadre-dev/cadre/tool"
)

func TestMatchCommandRule(t *testing.T) {
	type want struct{ allow, deny bool }
	for _, tc := range []struct {
		spec, cmd string
		want      want
	}{
		// prefix with a word boundary
		{"git diff:*", "git diff", want{true, true}},
		{"git diff:*", "git diff HEAD~1 -- a.go", want{true, true}},
		{"git diff:*", "git diffx", want{false, false}},
		{"git diff:*", "git  diff   HEAD", want{true, true}},
		{"git diff:*", "git status", want{false, false}},
		{"npm run test:*", "npm run test -- --watch", want{true, true}},
		{"npm run test:*", "npm run test:unit", want{false, false}},
		// "cmd *" is a word-boundary prefix too
		{"ls *", "ls -la", want{true, true}},
		{"ls *", "ls", want{true, true}},
		{"ls *", "lsof", want{false, false}},
		{"ls*", "lsof", want{true, true}},
		// exact
		{"npm test", "npm test", want{true, true}},
		{"npm test", "npm test --watch", want{false, false}},
		{"npm test", "npm tests", want{false, false}},
		// wildcards elsewhere
		{"git * main", "git push origin main", want{true, true}},
		{"git * main", "git push origin dev", want{false, false}},
		{"*", "anything at all", want{true, true}},
		{`echo \*`, "echo *", want{true, true}},
		{`echo \*`, "echo x", want{false, false}},
		// compound: allow needs every part, deny any part
		{"git diff:*", "git diff && git diff --stat", want{true, true}},
		{"git diff:*", "git diff && rm -rf /", want{false, true}},
		{"rm:*", "ls; rm -rf x", want{false, true}},
		{"rm:*", "cat x | rm y", want{false, true}},
		{"rm:*", "echo 'x; rm y'", want{false, false}},
		// substitutions: never allowed, deny sees inside
		{"echo:*", "echo $(whoami)", want{false, true}},
		{"rm:*", "echo $(rm -rf x)", want{false, true}},
		{"rm:*", "echo `rm -rf x`", want{false, true}},
		{"rm:*", `echo "$(rm x)"`, want{false, true}},
		// deny sees through assignments and quoting
		{"git push:*", "FOO=1 BAR='a b' git push origin", want{false, true}},
		{"git push:*", `git "push" origin`, want{false, true}},
		{"git push:*", `git pu\sh`, want{false, true}},
		{"rm:*", "", want{false, false}},
	} {
		if got := matchCommandRule(tc.spec, tc.cmd, listAllow); got != tc.want.allow {
			t.Errorf("allow %q on %q = %v, want %v", tc.spec, tc.cmd, got, tc.want.allow)
		}
		if got := matchCommandRule(tc.spec, tc.cmd, listDeny); got != tc.want.deny {
			t.Errorf("deny %q on %q = %v, want %v", tc.spec, tc.cmd, got, tc.want.deny)
		}
		if got := matchCommandRule(tc.spec, tc.cmd, listAsk); got != tc.want.deny {
			t.Errorf("ask %q on %q = %v, want %v", tc.spec, tc.cmd, got, tc.want.deny)
		}
	}
}

// TestUnreadableCommandsAreNeverApproved: a command past the analysis's
// bounds (its size, nesting, re-parsed scripts, wrappers) is not read, and
// no allow rule approves it, not even "*" (shellcmd's
// TestAnalyzeCommandBounds checks the bounds themselves).
func TestUnreadableCommandsAreNeverApproved(t *testing.T) {
	nestedSh := "rm f"
	for range 8 {
		nestedSh = "sh -c '" + strings.ReplaceAll(nestedSh, "'", `'\''`) + "'"
	}
	for name, cmd := range map[string]string{
		"long":               "echo " + strings.Repeat("a", 70<<10),
		"deep brackets":      strings.Repeat("(", 5000) + "ls" + strings.Repeat(")", 5000),
		"deep substitutions": strings.Repeat("$(", 3000) + "ls" + strings.Repeat(")", 3000),
		"deep sh -c":         nestedSh,
		"many wrappers":      strings.Repeat("env ", 40) + "rm f",
	} {
		a := shellcmd.Analyze(cmd)
		if len(a.Opaque) == 0 {
			t.Errorf("%s: read as if it were readable", name)
		}
		if commandMatches(a, "*", listAllow) {
			t.Errorf("%s: an allow rule matched what cannot be read", name)
		}
	}
}

func TestMatchPathRule(t *testing.T) {
	p := &Policy{Workspace: "/ws", Home: "/home/u"}
	const cwd = "/ws/sub"
	for _, tc := range []struct {
		spec, target string
		want         bool
	}{
		// //abs: absolute
		{"//etc/**", "/etc/passwd", true},
		{"//etc/**", "/etc", true},
		{"//etc/**", "/ws/etc/passwd", false},
		{"//etc/*.conf", "/etc/a.conf", true},
		{"//etc/*.conf", "/etc/x/a.conf", false},
		// ~/: home
		{"~/.ssh/**", "/home/u/.ssh/id_rsa", true},
		{"~/.ssh/**", "/ws/.ssh/id_rsa", false},
		{"~/.ssh", "/home/u/.ssh/id_rsa", true}, // a directory covers its contents
		{"~", "/home/u/x", true},
		// /x: workspace root, not cwd
		{"/src/**", "/ws/src/a.go", true},
		{"/src/**", "/ws/sub/src/a.go", false},
		{"/src/**", "/src/a.go", false},
		// ./x, x/y and bare names: the project root (here the workspace),
		// whatever the caller's cwd
		{"./src/**", "/ws/src/a/b.go", true},
		{"./src/**", "/ws/sub/src/a.go", false},
		{"src/*.go", "/ws/src/a.go", true},
		{"src/*.go", "/ws/sub/src/a.go", false},
		{"src/*.go", "/ws/src/x/a.go", false},
		{"src/**/*.go", "/ws/src/x/a.go", true},
		{"docs/", "/ws/docs/a.md", true},
		{".", "/ws/sub/a", true},
		{".", "/ws/a", true},
		{".", "/wsx/a", false},
		// bare names match at any depth below the project root
		{".env", "/ws/.env", true},
		{".env", "/ws/sub/a/b/.env", true},
		{".env", "/x/.env", false},
		{"*.pem", "/ws/sub/k/x.pem", true},
		{"secrets", "/ws/sub/a/secrets/key", true},
		// targets are cleaned first
		{"//etc/**", "/ws/../etc/passwd", true},
		{"./src/**", "/ws/sub/src/../../x", false},
	} {
		if got, err := p.matchPathRule(tc.spec, tc.target, cwd); got != tc.want || err != nil {
			t.Errorf("path rule %q on %q = %v, want %v", tc.spec, tc.target, got, tc.want)
		}
	}

	// Glob metacharacters in the workspace path are literal.
	q := &Policy{Workspace: "/w[s]"}
	if m, _ := q.matchPathRule("/a", "/w[s]/a", "/w[s]"); !m {
		t.Error("a workspace path with [ ] did not match literally")
	}
	if m, _ := q.matchPathRule("/a", "/ws/a", "/w[s]"); m {
		t.Error("a workspace path with [ ] was used as a glob")
	}
	// No home: ~ rules match nothing.
	if m, _ := (&Policy{Workspace: "/ws"}).matchPathRule("~/x", "/x", "/ws"); m {
		t.Error("a ~ rule matched with no Home set")
	}
}

func TestWildcard(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"a*b", "ab", true},
		{"a*b", "a/x y/b", true},
		{"a*b*c", "abxbc", true},
		{"a*b*c", "abxbd", false},
		{"**", "x", true},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{"mcp__gh__*", "mcp__gh__issue", true},
	} {
		if got := wildcard(tc.pattern, tc.s); got != tc.want {
			t.Errorf("wildcard(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

// TestMCPRulesNameTheExactServer: a grant for server gh never covers a
// server named gh__evil (issue 22); a deny or ask rule reads the name
// the wide way, which is the safe one.
func TestMCPRulesNameTheExactServer(t *testing.T) {
	for _, tc := range []struct {
		rule, tool string
		l          list
		want       bool
	}{
		{"mcp__gh", "mcp__gh__issue", listAllow, true},
		{"mcp__gh", "mcp__gh__evil__x", listAllow, false},
		{"mcp__gh__*", "mcp__gh__issue", listAllow, true},
		{"mcp__gh__*", "mcp__gh__evil__x", listAllow, false},
		{"mcp__gh", "mcp__ghx__issue", listAllow, false},
		{"mcp__gh", "mcp__gh__evil__x", listDeny, true},
		{"mcp__gh__*", "mcp__gh__evil__x", listDeny, true},
		{"mcp__gh__evil__x", "mcp__gh__evil__x", listAllow, true},
	} {
		r, err := ParseRule(tc.rule)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.namesTool(tc.tool, tc.l); got != tc.want {
			t.Errorf("%s names %s (list %d) = %v, want %v", tc.rule, tc.tool, tc.l, got, tc.want)
		}
	}
}

// TestDomainRulesNormalise: a WebFetch(domain:…) rule matches the host
// whatever its case and a trailing dot, on either side (issue 22: a deny
// of X missed "X.").
func TestDomainRulesNormalise(t *testing.T) {
	p := &Policy{Workspace: "/ws"}
	for _, tc := range []struct {
		spec, target string
		want         bool
	}{
		{"domain:evil.example", "domain:evil.example.", true},
		{"domain:evil.example", "domain:EVIL.example..", true},
		{"domain:Evil.Example.", "domain:evil.example", true},
		{"domain:*.evil.example", "domain:a.evil.example.", true},
		{"domain:evil.example", "domain:evil.example.org", false},
	} {
		r := Rule{Tool: "WebFetch", Specifier: tc.spec}
		c := call{name: "WebFetch", access: tool.AccessOther, target: tc.target}
		if got := p.matches(r, c, listDeny); got != tc.want {
			t.Errorf("%s matches %s = %v, want %v", r, tc.target, got, tc.want)
		}
	}
}
