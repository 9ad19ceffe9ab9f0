package permission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/tool"
)

type pathIn struct {
	Path string `json:"path,omitempty"`
}

type cmdIn struct {
	Command string `json:"command"`
}

func noop[In any](context.Context, tool.Env, In) (tool.Result, error) { return tool.Text("ok"), nil }

// fileTool is a fake file tool whose target is its path, made absolute
// against the call's cwd as the real ones do.
func fileTool(name string, access tool.Access) tool.Tool {
	t := tool.New(tool.Info{Name: name, Access: access}, noop[pathIn])
	t.TargetOf = func(env tool.Env, in pathIn) string {
		if in.Path == "" || filepath.IsAbs(in.Path) {
			return in.Path
		}
		return filepath.Join(env.Cwd, in.Path)
	}
	return t
}

func execTool(name string) tool.Tool {
	t := tool.New(tool.Info{Name: name, Access: tool.AccessExec}, noop[cmdIn])
	t.TargetOf = func(_ tool.Env, in cmdIn) string { return in.Command }
	return t
}

func otherTool(name string) tool.Tool {
	type in struct {
		Target string `json:"target,omitempty"`
	}
	t := tool.New(tool.Info{Name: name, Access: tool.AccessOther}, noop[in])
	t.TargetOf = func(_ tool.Env, v in) string { return v.Target }
	return t
}

var tools = map[string]tool.Tool{
	"Read":           fileTool("Read", tool.AccessRead),
	"Grep":           fileTool("Grep", tool.AccessRead),
	"Glob":           fileTool("Glob", tool.AccessRead),
	"LS":             fileTool("LS", tool.AccessRead),
	"Edit":           fileTool("Edit", tool.AccessEdit),
	"Write":          fileTool("Write", tool.AccessEdit),
	"Bash":           execTool("Bash"),
	"WebFetch":       otherTool("WebFetch"),
	"Agent":          otherTool("Agent"),
	"mcp__gh__issue": otherTool("mcp__gh__issue"),
	"mcp__gh__pr":    otherTool("mcp__gh__pr"),
	"mcp__db__query": otherTool("mcp__db__query"),
}

// asker records questions and answers with a fixed reply.
type asker struct {
	ok  bool
	err error
	got []Question
}

func (a *asker) Ask(_ context.Context, q Question) (Answer, error) {
	a.got = append(a.got, q)
	return Answer{Allow: a.ok}, a.err
}

var env = tool.Env{Cwd: "/ws", SessionID: "s1", ToolUseID: "tu1"}

// input builds the call input: a path for file tools, a command for Bash,
// a target for the others.
func input(toolName, arg string) json.RawMessage {
	key := "target"
	switch tools[toolName].Info().Access {
	case tool.AccessRead, tool.AccessEdit:
		key = "path"
	case tool.AccessExec:
		key = "command"
	}
	if arg == "" {
		return json.RawMessage(`{}`)
	}
	b, _ := json.Marshal(map[string]string{key: arg})
	return b
}

func mustRules(t testing.TB, allow, ask, deny string) Rules {
	t.Helper()
	var r Rules
	var err error
	for _, l := range []struct {
		dst *[]Rule
		s   string
	}{{&r.Allow, allow}, {&r.Ask, ask}, {&r.Deny, deny}} {
		if *l.dst, err = ParseRuleList(l.s); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// decide runs Permit and classifies the outcome: "allow", "ask" (the asker
// was asked; it says no), or "deny" (refused without asking).
func decide(t *testing.T, p Policy, toolName, arg string) string {
	t.Helper()
	a := &asker{}
	p.Asker = a
	err := p.Permit(context.Background(), toolName, tools[toolName], env, input(toolName, arg))
	switch {
	case err == nil && len(a.got) == 0:
		return "allow"
	case len(a.got) == 1:
		var d *Denied
		if !errors.As(err, &d) {
			t.Fatalf("%s %q: asked, then error %T %v", toolName, arg, err, err)
		}
		return "ask"
	default:
		var d *Denied
		if !errors.As(err, &d) {
			t.Fatalf("%s %q: error %T %v, want *Denied", toolName, arg, err, err)
		}
		return "deny"
	}
}

func TestModes(t *testing.T) {
	type call struct{ tool, arg string }
	calls := []call{
		{"Read", "/ws/a.go"},        // read inside
		{"Grep", ""},                // read with no target: the cwd
		{"Read", "/etc/passwd"},     // read outside
		{"Edit", "/ws/a.go"},        // edit inside
		{"Write", "/tmp/x"},         // edit outside
		{"Bash", "ls"},              // exec
		{"WebFetch", "http://x/"},   // other
		{"Read", "/extra/lib/a.go"}, // read in an additional dir
		{"Write", "/extra/lib/a"},   // edit in an additional dir
	}
	for _, tc := range []struct {
		mode Mode
		want []string // per call
	}{
		{ModePlan, []string{"allow", "allow", "ask", "deny", "deny", "deny", "deny", "allow", "deny"}},
		{ModeDefault, []string{"allow", "allow", "ask", "ask", "ask", "ask", "ask", "allow", "ask"}},
		{"", []string{"allow", "allow", "ask", "ask", "ask", "ask", "ask", "allow", "ask"}},
		{ModeAcceptEdits, []string{"allow", "allow", "ask", "allow", "ask", "ask", "ask", "allow", "allow"}},
		{ModeBypass, []string{"allow", "allow", "allow", "allow", "allow", "allow", "allow", "allow", "allow"}},
		// dontAsk and auto: default and acceptEdits that deny what they
		// would ask about.
		{ModeDontAsk, []string{"allow", "allow", "deny", "deny", "deny", "deny", "deny", "allow", "deny"}},
		{ModeAuto, []string{"allow", "allow", "deny", "allow", "deny", "deny", "deny", "allow", "allow"}},
		{"bogus", []string{"deny", "deny", "deny", "deny", "deny", "deny", "deny", "deny", "deny"}},
	} {
		p := Policy{Mode: tc.mode, Workspace: "/ws", AdditionalDirs: []string{"/extra/lib"}}
		var got []string
		for _, c := range calls {
			got = append(got, decide(t, p, c.tool, c.arg))
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("mode %q (-want +got):\n%s", tc.mode, diff)
		}
	}
}

// TestQuietModes: in dontAsk and auto an allow rule still allows, a deny
// rule still denies, the denial names the mode, and a subagent of such a
// parent never asks either.
func TestQuietModes(t *testing.T) {
	for _, m := range []Mode{ModeDontAsk, ModeAuto} {
		p := Policy{Mode: m, Workspace: "/ws", Rules: mustRules(t, "Bash(git status),Bash(git push:*)", "", "Bash(git push:*)")}
		for _, c := range []struct{ tool, arg, want string }{
			{"Bash", "git status", "allow"}, {"Bash", "rm -rf /", "deny"}, {"Bash", "git push origin", "deny"}, {"Edit", "/ws/a.go", map[Mode]string{ModeDontAsk: "deny", ModeAuto: "allow"}[m]},
		} {
			if got := decide(t, p, c.tool, c.arg); got != c.want {
				t.Errorf("%s: %s %q = %s, want %s", m, c.tool, c.arg, got, c.want)
			}
		}
		err := p.Permit(context.Background(), "Bash", tools["Bash"], env, input("Bash", "make"))
		if err == nil || !strings.Contains(err.Error(), string(m)) {
			t.Errorf("%s: denial %v does not name the mode", m, err)
		}
		if _, err := ParseMode(strings.ToLower(string(m))); err != nil {
			t.Errorf("ParseMode(%q): %v", m, err)
		}
	}
	for _, c := range []struct {
		parent Mode
		def    string
		want   Mode
	}{
		{ModeDontAsk, "", ModeDontAsk}, {ModeDontAsk, "default", ModeDontAsk}, {ModeAuto, "", ModeAuto},
		{ModeAuto, "bypassPermissions", ModeAuto}, {ModeDefault, "dontAsk", ModeDontAsk}, {ModeDontAsk, "plan", ModePlan},
	} {
		if got, err := ChildMode(c.parent, c.def); err != nil || got != c.want {
			t.Errorf("ChildMode(%s, %q) = %s, %v; want %s", c.parent, c.def, got, err, c.want)
		}
	}
}

func TestPlanModeDenialSaysReadOnly(t *testing.T) {
	p := Policy{Mode: ModePlan, Workspace: "/ws", Rules: mustRules(t, "Bash", "", "")}
	err := p.Permit(context.Background(), "Bash", tools["Bash"], env, input("Bash", "ls"))
	if err == nil || !strings.Contains(err.Error(), "plan mode is read-only") {
		t.Fatalf("plan mode with an allow rule for Bash: %v, want a read-only denial", err)
	}
}

func TestRulePrecedence(t *testing.T) {
	for _, tc := range []struct {
		name             string
		mode             Mode
		allow, ask, deny string
		tool, arg        string
		want             string
	}{
		{name: "allow rule allows", allow: "Bash(git diff:*)", tool: "Bash", arg: "git diff", want: "allow"},
		{name: "no rule asks", tool: "Bash", arg: "git diff", want: "ask"},
		{name: "ask beats allow", allow: "Bash", ask: "Bash(git push:*)", tool: "Bash", arg: "git push", want: "ask"},
		{name: "allow where ask does not match", allow: "Bash", ask: "Bash(git push:*)", tool: "Bash", arg: "git status", want: "allow"},
		{name: "deny beats ask and allow", allow: "Bash", ask: "Bash", deny: "Bash(rm:*)", tool: "Bash", arg: "rm -rf x", want: "deny"},
		{name: "deny any part of compound", allow: "Bash", deny: "Bash(rm:*)", tool: "Bash", arg: "ls && rm x", want: "deny"},
		{name: "allow needs every part", allow: "Bash(ls:*)", tool: "Bash", arg: "ls && rm x", want: "ask"},
		{name: "ask rule narrows inside workspace read", ask: "Read(./secret/**)", tool: "Read", arg: "/ws/secret/k", want: "ask"},
		{name: "deny read inside workspace", deny: "Read(.env)", tool: "Read", arg: "/ws/a/.env", want: "deny"},
		{name: "allow read outside workspace", allow: "Read(//usr/share/**)", tool: "Read", arg: "/usr/share/dict/words", want: "allow"},
		{name: "allow edit by pattern", allow: "Edit(docs/**)", tool: "Write", arg: "/ws/docs/a.md", want: "allow"},
		{name: "edit pattern misses", allow: "Edit(docs/**)", tool: "Write", arg: "/ws/src/a.go", want: "ask"},
		{name: "bypass: deny still holds", mode: ModeBypass, deny: "Bash(rm:*)", tool: "Bash", arg: "rm x", want: "deny"},
		{name: "bypass skips ask rules", mode: ModeBypass, ask: "Bash", tool: "Bash", arg: "ls", want: "allow"},
		{name: "plan: deny rule named before plan", mode: ModePlan, deny: "Read(//etc/**)", tool: "Read", arg: "/etc/x", want: "deny"},
		{name: "plan: ask rule on a read", mode: ModePlan, ask: "Read", tool: "Read", arg: "/ws/a", want: "ask"},
		{name: "acceptEdits: ask rule on an edit", mode: ModeAcceptEdits, ask: "Edit(/go.mod)", tool: "Edit", arg: "/ws/go.mod", want: "ask"},
		{name: "generic exact specifier", allow: "WebFetch(https://go.dev/)", tool: "WebFetch", arg: "https://go.dev/", want: "allow"},
		{name: "generic wildcard specifier", allow: "WebFetch(https://go.dev/*)", tool: "WebFetch", arg: "https://go.dev/doc", want: "allow"},
		{name: "generic specifier misses", allow: "WebFetch(https://go.dev/)", tool: "WebFetch", arg: "https://evil/", want: "ask"},
		{name: "specifier never matches no target", deny: "Bash(ls)", tool: "Bash", arg: "", want: "ask"},
		{name: "Bash(*) is bare", allow: "Bash(*)", tool: "Bash", arg: "", want: "allow"},
		{name: "mcp server rule", allow: "mcp__gh", tool: "mcp__gh__pr", want: "allow"},
		{name: "mcp server rule is not a prefix", allow: "mcp__g", tool: "mcp__gh__pr", want: "ask"},
		{name: "mcp wildcard", deny: "mcp__gh__*", tool: "mcp__gh__issue", want: "deny"},
		{name: "mcp exact", allow: "mcp__db__query", tool: "mcp__db__query", want: "allow"},
		{name: "Task rule covers Agent", allow: "Task(reviewer)", tool: "Agent", arg: "reviewer", want: "allow"},
		{name: "Agent rule by subagent type", deny: "Agent(explore)", tool: "Agent", arg: "explore", want: "deny"},
		{name: "Agent rule other type", deny: "Agent(explore)", tool: "Agent", arg: "reviewer", want: "ask"},
		// Deny and ask rules name tools ignoring case, whoever wrote them
		// (settings, an agent file, the SDK): a typo must not fail open.
		// Allow rules stay exact: reading a grant widely is the unsafe way.
		{name: "deny ignores case", allow: "Bash", deny: "bash(rm:*)", tool: "Bash", arg: "rm x", want: "deny"},
		{name: "deny family ignores case", deny: "read(.env)", tool: "Read", arg: "/ws/.env", want: "deny"},
		{name: "ask ignores case", allow: "Edit", ask: "EDIT(/go.mod)", tool: "Edit", arg: "/ws/go.mod", want: "ask"},
		{name: "deny Task alias ignores case", deny: "task(explore)", tool: "Agent", arg: "explore", want: "deny"},
		{name: "deny mcp server ignores case", deny: "MCP__GH", tool: "mcp__gh__pr", want: "deny"},
		{name: "deny wildcard ignores case", deny: "mcp__GH__*", tool: "mcp__gh__issue", want: "deny"},
		{name: "allow stays exact", allow: "bash", tool: "Bash", arg: "ls", want: "ask"},
		{name: "allow wildcard stays exact", allow: "MCP__GH__*", tool: "mcp__gh__issue", want: "ask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Mode: tc.mode, Workspace: "/ws", Home: "/home/u", Rules: mustRules(t, tc.allow, tc.ask, tc.deny)}
			if got := decide(t, p, tc.tool, tc.arg); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestFamilies(t *testing.T) {
	for _, tc := range []struct {
		rules     Rules
		tool, arg string
		want      string
	}{
		{mustRules(t, "", "", "Read(./secrets/**)"), "Grep", "/ws/secrets/a", "deny"},
		{mustRules(t, "", "", "Read(./secrets/**)"), "Glob", "/ws/secrets", "deny"},
		{mustRules(t, "", "", "Read(./secrets/**)"), "LS", "/ws/secrets/x/y", "deny"},
		{mustRules(t, "", "", "Read(./secrets/**)"), "Edit", "/ws/secrets/a", "ask"}, // Read rules do not cover edits
		{mustRules(t, "", "", "Edit(docs/**)"), "Write", "/ws/docs/a.md", "deny"},
		{mustRules(t, "", "", "Edit(docs/**)"), "Read", "/ws/docs/a.md", "allow"},
		{mustRules(t, "", "", "Read"), "Grep", "/ws/a", "deny"},
		{mustRules(t, "", "", "Edit"), "Write", "/ws/a", "deny"},
		{mustRules(t, "Edit", "", ""), "Write", "/tmp/a", "allow"},
		{mustRules(t, "Read", "", ""), "LS", "/", "allow"},
		{mustRules(t, "", "", "Grep"), "Read", "/ws/a", "allow"}, // a Grep rule is Grep's alone
		{mustRules(t, "", "", "Write(/gen/**)"), "Write", "/ws/gen/x", "deny"},
		{mustRules(t, "", "", "Write(/gen/**)"), "Edit", "/ws/gen/x", "ask"},
		{mustRules(t, "", "", "Read(~/.ssh/**)"), "Grep", "/home/u/.ssh/id", "deny"},
		// A malformed pattern (only Read and Edit are checked when parsed)
		// fails closed: it denies and asks, never allows.
		{Rules{Deny: []Rule{{Tool: "Write", Specifier: "a/[b"}}}, "Write", "/ws/x", "deny"},
		{Rules{Ask: []Rule{{Tool: "Write", Specifier: "a/[b"}}}, "Write", "/ws/x", "ask"},
		{Rules{Allow: []Rule{{Tool: "Read", Specifier: "a/[b"}}}, "Read", "/etc/x", "ask"},
	} {
		p := Policy{Workspace: "/ws", Home: "/home/u", Rules: tc.rules}
		if got := decide(t, p, tc.tool, tc.arg); got != tc.want {
			t.Errorf("rules %+v, %s %q: got %s, want %s", tc.rules, tc.tool, tc.arg, got, tc.want)
		}
	}
}

func TestRelativePathsUseCwdButRulesTheProject(t *testing.T) {
	p := Policy{Workspace: "/ws", Rules: mustRules(t, "", "", "Read(./a/**)")}
	sub := tool.Env{Cwd: "/ws/sub"}
	err := p.Permit(context.Background(), "Read", tools["Read"], sub, input("Read", "../a/x"))
	var d *Denied
	if !errors.As(err, &d) || d.Target != "/ws/a/x" || d.Rule != "Read(./a/**)" {
		t.Fatalf("relative read from a subfolder: %v (%+v), want denied for /ws/a/x", err, d)
	}
	if err := p.Permit(context.Background(), "Read", tools["Read"], sub, input("Read", "a/x")); err != nil {
		t.Fatalf("./a/** matched below the cwd instead of the project: %v", err)
	}
	// Escaping the workspace with .. is outside it.
	q := Policy{Workspace: "/ws"}
	if got := decide(t, q, "Read", "/ws/../etc/passwd"); got != "ask" {
		t.Errorf("read of /ws/../etc/passwd: %s, want ask", got)
	}
}

func TestDeniedText(t *testing.T) {
	p := Policy{Workspace: "/ws", Rules: mustRules(t, "", "", "Bash")}
	err := p.Permit(context.Background(), "Bash", tools["Bash"], env, input("Bash", "ls"))
	if got, want := err.Error(), `Permission to use Bash denied by rule "Bash" (permissions.deny)`; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	var d *Denied
	if !errors.As(err, &d) || d.Target != "ls" || d.Rule != "Bash" {
		t.Errorf("Denied = %+v", d)
	}
}

func TestAskWithNobody(t *testing.T) {
	p := Policy{Workspace: "/ws"}
	err := p.Permit(context.Background(), "Bash", tools["Bash"], env, input("Bash", "make"))
	var d *Denied
	if !errors.As(err, &d) {
		t.Fatalf("got %v, want *Denied", err)
	}
	for _, want := range []string{
		"Permission to use Bash denied: ",
		"requires approval",
		"nobody can approve it in this non-interactive session",
		"the user can allow it with --allowedTools or permissions.allow",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("text %q lacks %q", err.Error(), want)
		}
	}
	if d.Rule != "" {
		t.Errorf("Rule = %q, want none", d.Rule)
	}
}

func TestAsker(t *testing.T) {
	boom := errors.New("prompt closed")
	for _, tc := range []struct {
		name     string
		a        *asker
		wantErr  string // "" = allowed
		wantWrap error
	}{
		{name: "yes", a: &asker{ok: true}},
		{name: "no", a: &asker{ok: false}, wantErr: "the user refused"},
		{name: "error", a: &asker{err: boom}, wantErr: "the permission request failed: prompt closed", wantWrap: boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Workspace: "/ws", Asker: tc.a, Rules: mustRules(t, "", "Bash(git push:*)", "")}
			in := input("Bash", "git push")
			err := p.Permit(context.Background(), "Bash", tools["Bash"], env, in)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("got %v, want allowed", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want %q", err, tc.wantErr)
			}
			if tc.wantWrap != nil && !errors.Is(err, tc.wantWrap) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.wantWrap)
			}
			want := []Question{{
				Tool: "Bash", Target: "git push", Input: in, SessionID: "s1", ToolUseID: "tu1",
				Reason: `the rule "Bash(git push:*)" (permissions.ask) asks before every such call`,
			}}
			if diff := cmp.Diff(want, tc.a.got); diff != "" {
				t.Errorf("questions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAskReasons(t *testing.T) {
	for _, tc := range []struct {
		mode      Mode
		tool, arg string
		want      string
	}{
		{ModeDefault, "Read", "/etc/x", "Read reads /etc/x, which is outside the workspace"},
		{ModeDefault, "Edit", "/ws/a", "Edit changes files, which needs approval in default mode"},
		{ModeAcceptEdits, "Edit", "/tmp/a", "Edit changes /tmp/a, which is outside the workspace"},
		{ModeDefault, "Bash", "ls", "Bash runs commands, which needs approval in default mode"},
		{ModeAcceptEdits, "WebFetch", "u", "WebFetch needs approval in acceptEdits mode"},
	} {
		a := &asker{}
		p := Policy{Mode: tc.mode, Workspace: "/ws", Asker: a}
		_ = p.Permit(context.Background(), tc.tool, tools[tc.tool], env, input(tc.tool, tc.arg))
		if len(a.got) != 1 || a.got[0].Reason != tc.want {
			t.Errorf("%s %s %q: questions %+v, want reason %q", tc.mode, tc.tool, tc.arg, a.got, tc.want)
		}
	}
}

func TestAskCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := &asker{ok: true}
	p := Policy{Workspace: "/ws", Asker: a}
	err := p.Permit(ctx, "Bash", tools["Bash"], env, input("Bash", "ls"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want a denial wrapping context.Canceled", err)
	}
	if len(a.got) != 0 {
		t.Errorf("asked %d times after cancellation", len(a.got))
	}
}

type failingTarget struct{ tool.Tool }

func (failingTarget) Target(tool.Env, json.RawMessage) (string, error) {
	return "", fmt.Errorf("no path")
}

func TestTargetError(t *testing.T) {
	p := Policy{Mode: ModeBypass, Workspace: "/ws"}
	err := p.Permit(context.Background(), "Read", failingTarget{tools["Read"]}, env, nil)
	if err == nil || !strings.Contains(err.Error(), "cannot tell what this call would touch: no path") {
		t.Fatalf("got %v", err)
	}
}

func TestUntargetedTool(t *testing.T) {
	// A tool without Targeted: bare rules match, specifiers cannot.
	plain := struct{ tool.Tool }{tools["Bash"]} // hides Target
	p := Policy{Workspace: "/ws", Rules: mustRules(t, "Bash(ls)", "", "")}
	err := p.Permit(context.Background(), "Bash", plain, env, input("Bash", "ls"))
	if err == nil {
		t.Fatal("a specifier matched a tool that names no target")
	}
	p.Rules = mustRules(t, "Bash", "", "")
	if err := p.Permit(context.Background(), "Bash", plain, env, input("Bash", "ls")); err != nil {
		t.Fatalf("bare rule: %v", err)
	}
}

func TestRemovedAndPool(t *testing.T) {
	p := Policy{Rules: mustRules(t, "WebFetch", "Write", "Bash Read Edit(docs/**) mcp__gh Task Glob(*) ls")}
	for _, tc := range []struct {
		name     string
		wantRule string
	}{
		{"Bash", "Bash"},
		{"Read", "Read"},
		{"Grep", ""}, // family rules don't remove other tools
		{"Edit", ""}, // Edit(docs/**) has a specifier
		{"Write", ""},
		{"WebFetch", ""},
		{"mcp__gh__issue", "mcp__gh"},
		{"mcp__db__query", ""},
		{"Agent", "Task"},
		{"Glob", "Glob(*)"},
		{"LS", "ls"}, // a deny rule names its tool ignoring case
	} {
		rule, removed := p.Removed(tc.name)
		if rule != tc.wantRule || removed != (tc.wantRule != "") {
			t.Errorf("Removed(%q) = %q, %v; want %q", tc.name, rule, removed, tc.wantRule)
		}
	}

	var all []tool.Tool
	for _, n := range []string{"Read", "Grep", "Glob", "Edit", "Write", "Bash", "WebFetch", "Agent", "mcp__gh__issue", "mcp__db__query"} {
		all = append(all, tools[n])
	}
	set, err := tool.NewSet(all...)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Pool(set).Names()
	want := []string{"Grep", "Edit", "Write", "WebFetch", "mcp__db__query"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pool (-want +got):\n%s", diff)
	}
	// The original set is untouched.
	if set.Len() != len(all) {
		t.Errorf("Pool changed its input: %d tools left", set.Len())
	}
	// With no bare deny rule, the pool is the set itself: building a
	// child's pool copies nothing.
	if open := (&Policy{Rules: mustRules(t, "", "", "Edit(docs/**)")}); open.Pool(set) != set {
		t.Error("Pool removed nothing and still built a new set")
	}
}

func TestPermitRemovedTool(t *testing.T) {
	p := Policy{Mode: ModeBypass, Rules: mustRules(t, "", "", "Bash")}
	err := p.Permit(context.Background(), "Bash", nil, env, input("Bash", "ls"))
	if got, want := fmt.Sprint(err), `Permission to use Bash denied by rule "Bash" (permissions.deny): the tool is not available in this session`; got != want {
		t.Errorf("removed tool: %q, want %q", got, want)
	}
	err = p.Permit(context.Background(), "Nope", nil, env, nil)
	if got, want := fmt.Sprint(err), "Permission to use Nope denied: there is no tool named Nope in this session"; got != want {
		t.Errorf("unknown tool: %q, want %q", got, want)
	}
}

func TestWorkspaceEdges(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Policy
		env  tool.Env
		arg  string
		want string
	}{
		{"relative additional dir", Policy{Workspace: "/ws", AdditionalDirs: []string{"../lib"}}, env, "/lib/a", "allow"},
		{"home additional dir", Policy{Workspace: "/ws", Home: "/home/u", AdditionalDirs: []string{"~/notes"}}, env, "/home/u/notes/a", "allow"},
		{"home additional dir without Home", Policy{Workspace: "/ws", AdditionalDirs: []string{"~/notes"}}, env, "/notes/a", "ask"},
		{"sibling with a common prefix", Policy{Workspace: "/ws"}, env, "/wsx/a", "ask"},
		{"no workspace: the cwd stands in", Policy{}, tool.Env{Cwd: "/c"}, "/c/a", "allow"},
		{"no workspace: outside the cwd", Policy{}, tool.Env{Cwd: "/c"}, "/d/a", "ask"},
		{"no cwd: relative path under the workspace", Policy{Workspace: "/ws"}, tool.Env{}, "a/b", "allow"},
		{"nothing to anchor to", Policy{}, tool.Env{}, "a/b", "ask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &asker{}
			tc.p.Asker = a
			err := tc.p.Permit(context.Background(), "Read", tools["Read"], tc.env, input("Read", tc.arg))
			got := "allow"
			if len(a.got) > 0 {
				got = "ask"
			} else if err != nil {
				got = "deny: " + err.Error()
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestAgentAccessIsLeftToPermitSpawn(t *testing.T) {
	agentTool := tool.New(tool.Info{Name: "Agent", Aliases: []string{"Task"}, Access: tool.AccessAgent},
		func(context.Context, tool.Env, struct {
			SubagentType string `json:"subagent_type"`
		}) (tool.Result, error) {
			return tool.Text("ok"), nil
		})
	agentTool.TargetOf = func(_ tool.Env, in struct {
		SubagentType string `json:"subagent_type"`
	}) string {
		return in.SubagentType
	}
	for _, tc := range []struct {
		name  string
		mode  Mode
		deny  []string
		input string
		ok    bool
	}{
		{"default mode does not ask", ModeDefault, nil, `{"subagent_type":"reviewer"}`, true},
		{"plan mode may spawn", ModePlan, nil, `{"subagent_type":"reviewer"}`, true},
		{"a deny rule still holds", ModeDefault, []string{"Agent(reviewer)"}, `{"subagent_type":"reviewer"}`, false},
		{"another agent passes", ModeDefault, []string{"Agent(reviewer)"}, `{"subagent_type":"tester"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Policy{Mode: tc.mode, Workspace: t.TempDir()}
			for _, d := range tc.deny {
				r, err := ParseRule(d)
				if err != nil {
					t.Fatal(err)
				}
				p.Rules.Deny = append(p.Rules.Deny, r)
			}
			err := p.Permit(context.Background(), "Agent", agentTool, tool.Env{Cwd: p.Workspace}, json.RawMessage(tc.input))
			if (err == nil) != tc.ok {
				t.Errorf("Permit = %v, want allowed %v", err, tc.ok)
			}
		})
	}
}

// A denial says whether it was decided before anyone was asked, and by
// what: stream-json tells a program of those (permission_denied), not of
// the ones its own approver made.
func TestDeniedUnasked(t *testing.T) {
	for _, tc := range []struct {
		name        string
		p           Policy
		wantType    string
		wantUnasked bool
	}{
		{"deny rule", Policy{Workspace: "/ws", Asker: &asker{ok: true}, Rules: mustRules(t, "", "", "Bash(rm:*)")}, "rule", true},
		{"mode that denies instead of asking", Policy{Mode: ModeDontAsk, Workspace: "/ws", Asker: &asker{ok: true}}, "mode", true},
		{"nobody to ask", Policy{Workspace: "/ws"}, "other", true},
		{"the approver refused", Policy{Workspace: "/ws", Asker: &asker{ok: false}}, "", false},
		{"the approver failed", Policy{Workspace: "/ws", Asker: &asker{err: errors.New("prompt closed")}}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Permit(context.Background(), "Bash", tools["Bash"], env, input("Bash", "rm -rf x"))
			var d *Denied
			if !errors.As(err, &d) {
				t.Fatalf("got %v, want a *Denied", err)
			}
			if typ, unasked := d.Unasked(); typ != tc.wantType || unasked != tc.wantUnasked {
				t.Errorf("Unasked() = %q, %v; want %q, %v", typ, unasked, tc.wantType, tc.wantUnasked)
			}
		})
	}
}

// previewTool is an edit tool that can say what a call would change.
type previewTool struct {
	tool.Tool
	change *Change
	err    error
}

func (p previewTool) Target(env tool.Env, input json.RawMessage) (string, error) {
	return p.Tool.(tool.Targeted).Target(env, input)
}

func (p previewTool) Preview(tool.Env, json.RawMessage) (*Change, error) { return p.change, p.err }

// A question about a call whose tool can preview it carries the change;
// a preview that fails still asks, without one.
func TestQuestionCarriesTheChange(t *testing.T) {
	ch := &Change{Path: "/ws/a.go", Old: "a\n", New: "b\n", Diff: "--- /ws/a.go\n+++ /ws/a.go\n@@ -1 +1 @@\n-a\n+b\n"}
	for _, tc := range []struct {
		name string
		tool tool.Tool
		want *Change
	}{
		{"previewer", previewTool{Tool: fileTool("Edit", tool.AccessEdit), change: ch}, ch},
		{"failing previewer", previewTool{Tool: fileTool("Edit", tool.AccessEdit), err: errors.New("unreadable")}, nil},
		{"plain tool", fileTool("Edit", tool.AccessEdit), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &asker{ok: true}
			p := Policy{Workspace: "/ws", Asker: a}
			if err := p.Permit(context.Background(), "Edit", tc.tool, env, input("Edit", "/ws/a.go")); err != nil {
				t.Fatal(err)
			}
			if len(a.got) != 1 {
				t.Fatalf("asked %d times", len(a.got))
			}
			if diff := cmp.Diff(tc.want, a.got[0].Change); diff != "" {
				t.Errorf("change (-want +got):\n%s", diff)
			}
		})
	}
}
