package permission

import (
	"github.com/cadre-dev/cadre/tool"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in        string
		inner     bool
		want      []string
		wantSubst bool
	}{
		{in: "git diff", want: []string{"git diff"}},
		{in: "  git   diff \t HEAD  ", want: []string{"git diff HEAD"}},
		{in: "make && make test || echo fail; ls | wc -l", want: []string{"make", "make test", "echo fail", "ls", "wc -l"}},
		{in: "sleep 1 & rm x", want: []string{"sleep 1", "rm x"}},
		{in: "a\nb\n\nc", want: []string{"a", "b", "c"}},
		{in: "a |& b", want: []string{"a", "b"}},
		{in: "make 2>&1 >&2 &>log >|out", want: []string{"make 2>&1 >&2 &>log >|out"}},
		{in: `echo "a && b; c | d"`, want: []string{`echo "a && b; c | d"`}},
		{in: `echo 'a && b' && rm x`, want: []string{`echo 'a && b'`, "rm x"}},
		{in: `echo "a   b"   c`, want: []string{`echo "a   b" c`}},
		{in: `echo a\;b; ls`, want: []string{`echo a\;b`, "ls"}},
		{in: "git \\\n  diff", want: []string{"git diff"}},
		{in: "echo $(rm -rf x)", want: []string{"echo $(rm -rf x)"}, wantSubst: true},
		{in: "echo $(rm -rf x)", inner: true, want: []string{"echo", "rm -rf x"}, wantSubst: true},
		{in: "echo `rm x`", inner: true, want: []string{"echo", "rm x"}, wantSubst: true},
		{in: `echo "$(rm x)"`, inner: true, want: []string{`echo "`, "rm x", `"`}, wantSubst: true},
		{in: "diff <(ls a) b", want: []string{"diff <(ls a) b"}, wantSubst: true},
		{in: "(cd x && rm y)", inner: true, want: []string{"cd x", "rm y"}},
		{in: `echo '$(not run)'`, want: []string{`echo '$(not run)'`}},
		{in: "", want: nil},
	} {
		got, subst := splitCommand(tc.in, tc.inner)
		if diff := cmp.Diff(tc.want, got); diff != "" || subst != tc.wantSubst {
			t.Errorf("splitCommand(%q, %v) subst=%v (want %v) (-want +got):\n%s", tc.in, tc.inner, subst, tc.wantSubst, diff)
		}
	}
}

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

func TestStripAssignmentsAndUnquote(t *testing.T) {
	for in, want := range map[string]string{
		"FOO=1 git push":      "git push",
		"A=1 B='x y' ls":      "ls",
		"git push":            "git push",
		"=x ls":               "=x ls",
		"1A=2 ls":             "1A=2 ls",
		"FOO=1":               "FOO=1",
		`A="x \" y" ls -l`:    "ls -l",
		`./a=b ls`:            `./a=b ls`,
		`PATH=/x:$PATH make`:  "make",
		`X=$(rm -rf /) ls -a`: "ls -a",
	} {
		if got := stripAssignments(in); got != want {
			t.Errorf("stripAssignments(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`git "push"`:    "git push",
		`git 'pu'sh`:    "git push",
		`git pu\sh`:     "git push",
		`echo "a \" b"`: `echo a " b`,
		`echo "a \n"`:   `echo a \n`,
		`echo 'a \" b'`: `echo a \" b`,
		"plain words":   "plain words",
	} {
		if got := unquote(in); got != want {
			t.Errorf("unquote(%q) = %q, want %q", in, got, want)
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
