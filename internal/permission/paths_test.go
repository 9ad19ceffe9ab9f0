package permission

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/tool"
)

// permitIn runs Permit for toolName on arg from cwd and classifies the
// outcome as decide does.
func permitIn(t *testing.T, p Policy, toolName, cwd, arg string) string {
	t.Helper()
	a := &asker{}
	p.Asker = a
	err := p.Permit(context.Background(), toolName, tools[toolName], tool.Env{Cwd: cwd, SessionID: "s1"}, input(toolName, arg))
	switch {
	case err == nil && len(a.got) == 0:
		return "allow"
	case len(a.got) == 1:
		return "ask"
	}
	var d *Denied
	if !errors.As(err, &d) {
		t.Fatalf("%s %q: error %T %v, want *Denied", toolName, arg, err, err)
	}
	return "deny"
}

// Files that decide what cadre (or git, or another agent tool) may do are
// never changed without the user: not by acceptEdits, not by an allow
// rule; only bypassPermissions or an answer from the user lets it through.
func TestProtectedPathsNeedApproval(t *testing.T) {
	ws := Policy{Workspace: "/ws", Home: "/home/u"}
	worktree := Policy{Workspace: "/repo/.git/cadre-worktrees/abc", Project: "/repo", Home: "/home/u"}
	for _, tc := range []struct {
		name  string
		p     Policy
		mode  Mode
		allow string
		tool  string
		path  string
		want  string
	}{
		{"project settings", ws, ModeAcceptEdits, "", "Write", "/ws/.cadre/settings.json", "ask"},
		{"local settings", ws, ModeAcceptEdits, "", "Write", "/ws/.cadre/settings.local.json", "ask"},
		{"an allow rule naming it does not lift it", ws, ModeAcceptEdits, "Edit(./.cadre/**)", "Write", "/ws/.cadre/settings.local.json", "ask"},
		{"a bare allow rule does not lift it", ws, ModeDefault, "Write", "Write", "/ws/.cadre/settings.json", "ask"},
		{"git config", ws, ModeAcceptEdits, "", "Edit", "/ws/.git/config", "ask"},
		{"git hook", ws, ModeAcceptEdits, "", "Write", "/ws/.git/hooks/pre-commit", "ask"},
		{"git dir of a nested repository", ws, ModeAcceptEdits, "", "Write", "/ws/vendor/x/.git/config", "ask"},
		{"git dir in another case", ws, ModeAcceptEdits, "", "Write", "/ws/.GIT/config", "ask"},
		{"claude settings", ws, ModeAcceptEdits, "", "Write", "/ws/.claude/settings.json", "ask"},
		{"claude agent file", ws, ModeAcceptEdits, "", "Write", "/ws/.claude/agents/x.md", "ask"},
		{"opencode agent file", ws, ModeAcceptEdits, "", "Write", "/ws/.opencode/agent/x.md", "ask"},
		{"mcp config", ws, ModeAcceptEdits, "", "Write", "/ws/.mcp.json", "ask"},
		{"mcp config below", ws, ModeAcceptEdits, "", "Write", "/ws/sub/.mcp.json", "ask"},
		{"user claude dir", ws, ModeAcceptEdits, "Edit(//home/u/**)", "Write", "/home/u/.claude/settings.json", "ask"},
		{"user cadre dir", ws, ModeAcceptEdits, "Edit(~/**)", "Write", "/home/u/.cadre/settings.json", "ask"},
		{"plan mode still denies", ws, ModePlan, "", "Write", "/ws/.cadre/settings.json", "deny"},
		{"bypassPermissions lets it through", ws, ModeBypass, "", "Write", "/ws/.cadre/settings.json", "allow"},
		{"reading it is fine", ws, ModeDefault, "", "Read", "/ws/.git/config", "allow"},
		{"gitignore is an ordinary file", ws, ModeAcceptEdits, "", "Write", "/ws/.gitignore", "allow"},
		{"a name that only starts alike", ws, ModeAcceptEdits, "", "Write", "/ws/.cadrerc/x", "allow"},
		{"mcp.json without the dot", ws, ModeAcceptEdits, "", "Write", "/ws/mcp.json", "allow"},
		{"ordinary file", ws, ModeAcceptEdits, "", "Edit", "/ws/src/a.go", "allow"},
		{"worktree child edits its own files", worktree, ModeAcceptEdits, "", "Write", "/repo/.git/cadre-worktrees/abc/src/a.go", "allow"},
		{"but not the worktree's .git file", worktree, ModeAcceptEdits, "", "Write", "/repo/.git/cadre-worktrees/abc/.git", "ask"},
		{"nor the repository's git dir", worktree, ModeAcceptEdits, "Edit(//repo/**)", "Write", "/repo/.git/config", "ask"},
		{"nor the worktree's settings", worktree, ModeAcceptEdits, "", "Write", "/repo/.git/cadre-worktrees/abc/.cadre/settings.json", "ask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			p.Mode = tc.mode
			p.Rules = mustRules(t, tc.allow, "", "")
			if got := permitIn(t, p, tc.tool, p.Workspace, tc.path); got != tc.want {
				t.Errorf("%s %s in %s: got %s, want %s", tc.tool, tc.path, tc.mode, got, tc.want)
			}
		})
	}
}

// With nobody to ask, the denial says which protection held and that no
// rule can lift it.
func TestProtectedPathHeadlessDenial(t *testing.T) {
	p := Policy{Mode: ModeAcceptEdits, Workspace: "/ws", Rules: mustRules(t, "Write", "", "")}
	err := p.Permit(context.Background(), "Write", tools["Write"], env, input("Write", "/ws/.cadre/settings.json"))
	var d *Denied
	if !errors.As(err, &d) {
		t.Fatalf("got %v, want *Denied", err)
	}
	for _, want := range []string{"/ws/.cadre/settings.json", ".cadre", "approval"} {
		if !strings.Contains(d.Error(), want) {
			t.Errorf("denial %q does not mention %q", d.Error(), want)
		}
	}
	if strings.Contains(d.Error(), "permissions.allow") {
		t.Errorf("denial %q suggests an allow rule, which cannot lift this", d.Error())
	}
}

// fsTree makes a workspace with symbolic links out of it, in real
// directories: ws/link -> outside, ws/flink -> outside/secret.txt,
// ws/dangling -> outside/new.txt (not there yet), ws/deep ->
// outside/missing, ws/alias -> ws/sub (inside), ws/cfg -> ws/.cadre.
func fsTree(t *testing.T) (root, ws, outside string) {
	t.Helper()
	root = t.TempDir()
	ws, outside = filepath.Join(root, "ws"), filepath.Join(root, "outside")
	for _, d := range []string{ws, outside, filepath.Join(ws, "sub"), filepath.Join(ws, ".cadre")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(outside, "secret.txt"), filepath.Join(ws, "real.txt"), filepath.Join(ws, "secret.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"link": outside, "flink": filepath.Join(outside, "secret.txt"), "dangling": filepath.Join(outside, "new.txt"),
		"deep": filepath.Join(outside, "missing"), "alias": "sub", "cfg": ".cadre", "secretalias": "secret.txt",
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root, ws, outside
}

func TestSymlinksCannotLeaveTheWorkspace(t *testing.T) {
	root, ws, outside := fsTree(t)
	wsLink := filepath.Join(root, "wslink")
	if err := os.Symlink(ws, wsLink); err != nil {
		t.Fatal(err)
	}
	in := func(rel string) string { return filepath.Join(ws, rel) }
	for _, tc := range []struct {
		name, tool, path string
		workspace        string
		want             string
	}{
		{"read through a linked directory", "Read", in("link/secret.txt"), ws, "ask"},
		{"read a linked file", "Read", in("flink"), ws, "ask"},
		{"grep a linked directory", "Grep", in("link"), ws, "ask"},
		{"write through a linked directory", "Write", in("link/new.txt"), ws, "ask"},
		{"write a dangling link", "Write", in("dangling"), ws, "ask"},
		{"write below a dangling directory link", "Write", in("deep/a/b.txt"), ws, "ask"},
		{"edit a linked file", "Edit", in("flink"), ws, "ask"},
		{"write a settings file through a link", "Write", in("cfg/settings.local.json"), ws, "ask"},
		{"a link that stays inside", "Write", in("alias/a.txt"), ws, "allow"},
		{"an ordinary file", "Edit", in("real.txt"), ws, "allow"},
		{"a new file in a new directory", "Write", in("newdir/x/new.txt"), ws, "allow"},
		{"dot-dot out", "Read", in("sub/../../outside/secret.txt"), ws, "ask"},
		{"workspace given through a link, path resolved", "Edit", in("real.txt"), wsLink, "allow"},
		{"workspace given through a link, path through it", "Edit", filepath.Join(wsLink, "real.txt"), wsLink, "allow"},
		{"path through a link to the workspace", "Edit", filepath.Join(wsLink, "real.txt"), ws, "allow"},
		{"link out, workspace given through a link", "Read", filepath.Join(wsLink, "link/secret.txt"), wsLink, "ask"},
		{"the outside itself", "Read", filepath.Join(outside, "secret.txt"), ws, "ask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Mode: ModeAcceptEdits, Workspace: tc.workspace}
			if got := permitIn(t, p, tc.tool, tc.workspace, tc.path); got != tc.want {
				t.Errorf("%s %s: got %s, want %s", tc.tool, tc.path, got, tc.want)
			}
		})
	}
}

// Deny rules hold for the file whichever name reaches it; allow rules
// judge where a path really leads.
func TestPathRulesSeeThroughSymlinks(t *testing.T) {
	_, ws, outside := fsTree(t)
	in := func(rel string) string { return filepath.Join(ws, rel) }
	if err := os.MkdirAll(in("docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, in("docs/evil")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name              string
		allow, ask, deny  string
		mode              Mode
		tool, path, wantG string
	}{
		{"deny by the literal name", "", "", "Read(./secret.txt)", ModeDefault, "Read", in("secret.txt"), "deny"},
		{"deny through another name", "", "", "Read(./secret.txt)", ModeDefault, "Read", in("secretalias"), "deny"},
		{"deny of a linked directory by its name", "", "", "Read(./link/**)", ModeBypass, "Read", in("link/secret.txt"), "deny"},
		{"deny of the outside reached through a link", "", "", "Read(//" + strings.TrimPrefix(outside, "/") + "/**)", ModeBypass, "Read", in("flink"), "deny"},
		{"ask rule through another name", "", "Read(./secret.txt)", "", ModeDefault, "Grep", in("secretalias"), "ask"},
		{"allow rule: a link planted below it leads out", "Read(./docs/**)", "", "", ModeDefault, "Read", in("docs/evil/secret.txt"), "ask"},
		{"allow rule naming the link itself", "Read(./link/**)", "", "", ModeDefault, "Read", in("link/secret.txt"), "allow"},
		{"edit allow rule: a link planted below it leads out", "Edit(./docs/**)", "", "", ModeDefault, "Write", in("docs/evil/x.txt"), "ask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Mode: tc.mode, Workspace: ws, Rules: mustRules(t, tc.allow, tc.ask, tc.deny)}
			if got := permitIn(t, p, tc.tool, ws, tc.path); got != tc.wantG {
				t.Errorf("%s %s: got %s, want %s", tc.tool, tc.path, got, tc.wantG)
			}
		})
	}
}

// Path rules are anchored to the project, not to the caller's cwd: a
// subagent started in a subfolder cannot step round Read(./secret.txt).
func TestPathRulesAnchorAtTheProject(t *testing.T) {
	for _, tc := range []struct {
		name, rule, cwd, path string
		want                  string
	}{
		{"./x from a subfolder", "Read(./secret.txt)", "/ws/sub", "../secret.txt", "deny"},
		{"./x does not follow the cwd", "Read(./secret.txt)", "/ws/sub", "secret.txt", "allow"},
		{"x/y from a subfolder", "Read(keys/id.pem)", "/ws/sub", "/ws/keys/id.pem", "deny"},
		{"bare name at any depth of the project", "Read(.env)", "/ws/sub", "/ws/.env", "deny"},
		{"bare name below", "Read(.env)", "/ws/sub", "/ws/a/b/.env", "deny"},
		{"/x at the project root", "Read(/conf/**)", "/ws/sub", "/ws/conf/a", "deny"},
		{"dot", "Read(.)", "/ws/sub", "/ws/a", "deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Workspace: "/ws", Rules: mustRules(t, "", "", tc.rule)}
			if got := permitIn(t, p, "Read", tc.cwd, tc.path); got != tc.want {
				t.Errorf("%s: read %s from %s: got %s, want %s", tc.rule, tc.path, tc.cwd, got, tc.want)
			}
		})
	}
}

func TestConfigDirsAreProtected(t *testing.T) {
	p := Policy{Mode: ModeAcceptEdits, Workspace: "/ws", ConfigDirs: []string{"/state"}, Rules: mustRules(t, "Edit(//state/**)", "", "")}
	for path, want := range map[string]string{
		"/state/settings.json":   "ask",
		"/state/agents/x.md":     "ask",
		"/statex/settings.json":  "ask", // outside the workspace, no rule
		"/ws/state/settings.txt": "allow",
	} {
		if got := permitIn(t, p, "Write", "/ws", path); got != want {
			t.Errorf("Write %s: got %s, want %s", path, got, want)
		}
	}
}

func TestContains(t *testing.T) {
	root, ws, outside := fsTree(t)
	p := Policy{Workspace: ws, AdditionalDirs: []string{filepath.Join(root, "extra")}}
	for path, want := range map[string]bool{
		ws:                           true,
		filepath.Join(ws, "sub"):     true,
		filepath.Join(ws, "alias"):   true,
		filepath.Join(ws, "link"):    false,
		filepath.Join(ws, "deep/x"):  false,
		outside:                      false,
		filepath.Join(root, "extra"): true,
		"/":                          false,
		"relative":                   false,
	} {
		if got := p.Contains(path); got != want {
			t.Errorf("Contains(%s) = %v, want %v", path, got, want)
		}
	}
}

// A deny or ask rule keeps what it names out of searches and listings of
// the tools it covers.
func TestReadFilter(t *testing.T) {
	root, ws, _ := fsTree(t)
	rules := mustRules(t, "Read(./pub/**)", "Read(*.pem)", "Read(.env), Read(./secrets), Grep(./only-grep/**), Read(./link/**)")
	in := func(rel string) string { return filepath.Join(ws, rel) }
	p := Policy{Workspace: ws, Rules: rules}
	grep := p.ReadFilter("Grep", tools["Grep"], tool.Env{Cwd: in("sub")})
	glob := p.ReadFilter("Glob", tools["Glob"], tool.Env{Cwd: ws})
	if grep == nil || glob == nil {
		t.Fatal("no filter for rules that name files")
	}
	for _, tc := range []struct {
		f    func(string) bool
		path string
		want bool
	}{
		{grep, in(".env"), false},
		{grep, in("a/b/.env"), false},
		{grep, in("secrets"), false},
		{grep, in("secrets/k"), false},
		{grep, in("k.pem"), false},
		{grep, in("only-grep/x"), false},
		{grep, in("link/secret.txt"), false},
		{grep, filepath.Join(root, "outside/secret.txt"), false}, // where link/ really is
		{grep, in("a.go"), true},
		{grep, in("pub/a.go"), true},
		{glob, in("only-grep/x"), true},
		{glob, in(".env"), false},
	} {
		if got := tc.f(tc.path); got != tc.want {
			t.Errorf("readable(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
	bypass := Policy{Mode: ModeBypass, Workspace: ws, Rules: rules}
	if f := bypass.ReadFilter("Grep", tools["Grep"], tool.Env{Cwd: ws}); !f(in("k.pem")) || f(in(".env")) {
		t.Error("in bypassPermissions ask rules should not filter and deny rules should")
	}
	if f := p.ReadFilter("Write", tools["Write"], tool.Env{Cwd: ws}); f != nil {
		t.Error("a filter for a tool that does not read")
	}
	if f := (&Policy{Workspace: ws, Rules: mustRules(t, "Read(.env)", "Read", "Grep")}).ReadFilter("Grep", tools["Grep"], tool.Env{Cwd: ws}); f != nil {
		t.Error("a filter with no deny or ask rule naming files")
	}
}

func BenchmarkReadFilter(b *testing.B) {
	rules, err := ParseRuleList("Read(.env), Read(./secrets/**), Read(*.pem), Read(//etc/**), Read(~/.ssh/**)")
	if err != nil {
		b.Fatal(err)
	}
	p := Policy{Workspace: "/ws/project", Home: "/home/u", Rules: Rules{Deny: rules}}
	paths := make([]string, 5000)
	for i := range paths {
		paths[i] = filepath.Join("/ws/project", "pkg"+string(rune('a'+i%26)), "sub", "file"+string(rune('a'+i%7))+".go")
	}
	b.ResetTimer()
	for b.Loop() {
		f := p.ReadFilter("Grep", tools["Grep"], tool.Env{Cwd: "/ws/project"})
		for _, path := range paths {
			f(path)
		}
	}
}

// The output files of the session tree's own tasks may be read from
// outside the workspace; nothing else of the state dir may.
func TestReadableFile(t *testing.T) {
	own := func(_ context.Context, sid, path string) bool { return sid == "s1" && path == "/state/tasks/t1.output" }
	p := Policy{Workspace: "/ws", ReadableFile: own}
	for _, tc := range []struct {
		p          Policy
		tool, path string
		want       string
	}{
		{p, "Read", "/state/tasks/t1.output", "allow"},
		{p, "Read", "/state/tasks/t2.output", "ask"},
		{p, "Grep", "/state/tasks", "ask"},
		{Policy{Workspace: "/ws", ReadableFile: own, Rules: mustRules(t, "", "", "Read(//state/**)")}, "Read", "/state/tasks/t1.output", "deny"},
		{Policy{Workspace: "/ws", ReadableFile: own, Rules: mustRules(t, "", "Read(//state/**)", "")}, "Read", "/state/tasks/t1.output", "ask"},
		{Policy{Mode: ModePlan, Workspace: "/ws", ReadableFile: own}, "Read", "/state/tasks/t1.output", "allow"},
	} {
		if got := permitIn(t, tc.p, tc.tool, "/ws", tc.path); got != tc.want {
			t.Errorf("%s %s: got %s, want %s", tc.tool, tc.path, got, tc.want)
		}
	}
	// Another session of the same process is not the owner.
	a := &asker{}
	p.Asker = a
	if err := p.Permit(context.Background(), "Read", tools["Read"], tool.Env{Cwd: "/ws", SessionID: "s2"}, input("Read", "/state/tasks/t1.output")); err == nil || len(a.got) != 1 {
		t.Errorf("another session read the output file: %v", err)
	}
}
