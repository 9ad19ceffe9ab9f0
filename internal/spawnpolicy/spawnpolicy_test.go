package spawnpolicy

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// TestWhere: a model-given cwd must lie in the parent's workspace (or a
// directory the user added), resolved through links, and the child's root
// stays the parent's, so its cwd cannot widen what it may touch; a
// definition's own workspace must lie inside too.
func TestWhere(t *testing.T) {
	root := t.TempDir()
	main, extra, outside := filepath.Join(root, "main"), filepath.Join(root, "extra"), filepath.Join(root, "outside")
	tree := filepath.Join(main, ".git", "cadre-worktrees", "abc")
	for _, d := range []string{filepath.Join(main, "sub"), extra, outside, filepath.Join(tree, "pkg")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(main, "link")); err != nil {
		t.Fatal(err)
	}
	inMain := permission.Policy{Workspace: main, Project: main, AdditionalDirs: []string{extra}}
	inTree := inMain
	inTree.Workspace = tree
	gp := agent.GeneralPurpose()
	isolated := agent.GeneralPurpose()
	isolated.Name, isolated.Workspace = "iso", &agent.Workspace{Mode: agent.WorkspaceIsolated, Path: outside}
	for _, tc := range []struct {
		name      string
		parent    permission.Policy
		def       agent.Definition
		callerCwd string
		cwd       string
		recorded  bool
		wantCwd   string
		wantRoot  string
		err       string
	}{
		{"no cwd", inMain, gp, main, "", false, main, main, ""},
		{"a subfolder", inMain, gp, main, "sub", false, filepath.Join(main, "sub"), main, ""},
		{"an added directory", inMain, gp, main, extra, false, extra, main, ""},
		{"the root", inMain, gp, main, "/", false, "", "", "outside the workspace"},
		{"dot-dot", inMain, gp, main, "sub/../..", false, "", "", "outside the workspace"},
		{"a link out", inMain, gp, main, "link", false, "", "", "outside the workspace"},
		{"not a directory", inMain, gp, main, "nope", false, "", "", `cwd "nope" is not a directory`},
		{"a definition workspace outside", inMain, isolated, main, "", false, "", "", "its workspace " + outside + " is outside the workspace"},
		{"a worktree child's child stays in the worktree", inTree, gp, filepath.Join(tree, "pkg"), "", false, tree, tree, ""},
		{"nor leaves it by cwd", inTree, gp, filepath.Join(tree, "pkg"), filepath.Join(main, "sub"), false, "", "", "outside the workspace"},
		{"a continued agent goes back to its worktree", inMain, gp, main, tree, true, tree, tree, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Where(tc.parent, main, tc.def, tc.callerCwd, tc.cwd, tc.recorded)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Cwd != tc.wantCwd || p.Root != tc.wantRoot {
				t.Errorf("cwd %s, root %s; want %s, %s", p.Cwd, p.Root, tc.wantCwd, tc.wantRoot)
			}
		})
	}
}

// TestChoose (S-A3): call > definition > subagents.model > parent;
// "inherit" is the parent's; a name that does not resolve warns and falls
// back; a tool call cannot pick the scripted model, which is never
// resolved; the agent's own model without its key is an error.
func TestChoose(t *testing.T) {
	parent := &llm.ModelFunc{ID: "parent"}
	var resolved []string
	m := Models{Default: "sonnet", Resolve: func(name string) (llm.Model, provider.Ref, error) {
		resolved = append(resolved, name)
		switch name {
		case "opus", "haiku", "sonnet":
			return &llm.ModelFunc{ID: name}, provider.Ref{Model: name}, nil
		case "keyless":
			return nil, provider.Ref{}, &llm.Error{Kind: llm.ErrAuth, Message: "no key"}
		}
		return nil, provider.Ref{}, errors.New("unknown")
	}}
	for _, tc := range []struct {
		name, call, def string
		noDefault       bool
		want            string
		warnings        []string
		err             string
	}{
		{name: "the call's model wins", call: "opus", def: "haiku", want: "opus"},
		{name: "then the definition's", def: "haiku", want: "haiku"},
		{name: "then subagents.model", want: "sonnet"},
		{name: "then the parent's", noDefault: true, want: "parent"},
		{name: "definition inherit", def: "inherit", want: "parent"},
		{name: "call inherit", call: "inherit", def: "haiku", want: "parent"},
		{name: "an unresolvable call model", call: "nope", def: "haiku", want: "haiku", warnings: []string{`the call's model "nope" cannot be used (unknown); falling back`}},
		{name: "the scripted model from a call", call: "script:/etc/passwd", def: "haiku", want: "haiku", warnings: []string{`the call's model "script:/etc/passwd" cannot be used (a tool call cannot choose the scripted model`}},
		{name: "the agent's model without its key", def: "keyless", err: `its model "keyless" cannot be used and no other account stands in for it`},
		{name: "the call's model without its key falls back", call: "keyless", def: "haiku", want: "haiku", warnings: []string{`the call's model "keyless" cannot be used`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resolved = nil
			mm := m
			if tc.noDefault {
				mm.Default = ""
			}
			got, _, warnings, err := mm.Choose(tc.call, tc.def, parent, provider.Ref{Model: "parent"})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || got.Name() != tc.want {
				t.Fatalf("model %v (%v), want %s", got, err, tc.want)
			}
			if len(warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %q", warnings, tc.warnings)
			}
			for i, w := range tc.warnings {
				if !strings.HasPrefix(warnings[i], w) {
					t.Errorf("warning %q, want it to start %q", warnings[i], w)
				}
			}
			if slices.ContainsFunc(resolved, func(n string) bool { return strings.HasPrefix(n, "script:") }) {
				t.Error("the scripted model named in a call was resolved")
			}
		})
	}
}

// TestRules: a child's policy adds its definition's rules to the
// runtime's without changing them, adds the parent's workspace when its
// root is another, and lets allowed-tools allow what they name unless an
// untrusted project wrote them.
func TestRules(t *testing.T) {
	write, err := permission.ParseRule("Write")
	if err != nil {
		t.Fatal(err)
	}
	base := permission.Policy{Workspace: "/w", Rules: permission.Rules{Deny: []permission.Rule{write}}}
	def := agent.GeneralPurpose()
	def.Allow, def.Deny = []string{"Bash(go test:*)"}, []string{"WebFetch"}
	pol, err := Rules(base, permission.ModeAcceptEdits, "/w/agents/x", "/w", def, []string{"Bash(git diff:*)"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if pol.Mode != permission.ModeAcceptEdits || pol.Workspace != "/w/agents/x" || !slices.Equal(pol.AdditionalDirs, []string{"/w"}) {
		t.Errorf("mode %s, workspace %s, added %v", pol.Mode, pol.Workspace, pol.AdditionalDirs)
	}
	if len(pol.Rules.Allow) != 2 || len(pol.Rules.Deny) != 2 || len(base.Rules.Deny) != 1 {
		t.Errorf("allow %v, deny %v (runtime's deny %v)", pol.Rules.Allow, pol.Rules.Deny, base.Rules.Deny)
	}
	untrusted, _ := Rules(base, permission.ModeDefault, "/w", "/w", def, []string{"Bash(git diff:*)"}, true)
	if len(untrusted.Rules.Allow) != 1 || len(untrusted.AdditionalDirs) != 0 {
		t.Errorf("untrusted allowed-tools granted: allow %v, added %v", untrusted.Rules.Allow, untrusted.AdditionalDirs)
	}
	def.Deny = []string{"Bash("}
	if _, err := Rules(base, permission.ModeDefault, "/w", "/w", def, nil, false); err == nil || !strings.Contains(err.Error(), `permission rule "Bash("`) {
		t.Errorf("a bad rule: %v", err)
	}
}

// TestTools (S-P2): a child's pool is what its definition names (aliases
// and wildcards too) less what it and the subagent tool policy deny,
// within a command's allowed-tools; a teammate keeps its team's tools.
func TestTools(t *testing.T) {
	info := func(name string, aliases ...string) tool.Info { return tool.Info{Name: name, Aliases: aliases} }
	pool := []tool.Info{info("Read"), info("Bash"), info("Agent", "Task"), info("mcp__github__issue"), info("SendMessage")}
	keep := func(f Tools) []string {
		var out []string
		for _, i := range pool {
			if f.Keep(i) {
				out = append(out, i.Name)
			}
		}
		return out
	}
	def := agent.GeneralPurpose()
	for _, tc := range []struct {
		name  string
		f     Tools
		wants []string
	}{
		{"all", Tools{Def: def}, []string{"Read", "Bash", "Agent", "mcp__github__issue", "SendMessage"}},
		{"named, by alias and wildcard", Tools{Def: agent.Definition{Tools: []string{"read", "Task", "mcp__github__*"}}}, []string{"Read", "Agent", "mcp__github__issue"}},
		{"disallowed", Tools{Def: agent.Definition{DisallowedTools: []string{"Bash(rm:*)"}}}, []string{"Read", "Agent", "mcp__github__issue", "SendMessage"}},
		{"the settings' policy", Tools{Def: def, Settings: config.SubagentTools{Allow: []string{"Read", "Bash", "mcp__*"}, Deny: []string{"Bash"}}}, []string{"Read", "mcp__github__issue"}},
		{"allowed-tools", Tools{Def: def, Only: []string{"Read"}}, []string{"Read"}},
		{"a teammate's team tools", Tools{Def: agent.Definition{Tools: []string{"Read"}}, Team: func(n string) bool { return n == "SendMessage" }}, []string{"Read", "SendMessage"}},
	} {
		if got := keep(tc.f); !slices.Equal(got, tc.wants) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.wants)
		}
	}
}

// defs are definitions by name.
type defs map[string]agent.Definition

func (d defs) Get(name string) (agent.Definition, bool) { r, ok := d[name]; return r, ok }

// TestRoute (S-A2): no subagent_type is general-purpose; an unknown name,
// a primary agent and a remote one without a url are refused, the first
// two listing the agents the caller may use.
func TestRoute(t *testing.T) {
	d := defs{
		"general-purpose": agent.GeneralPurpose(),
		"build":           {Name: "build", Mode: "primary"},
		"far":             {Name: "far", Isolation: agent.IsolationRemote},
	}
	available := func() []string { return []string{"general-purpose", "explore"} }
	if def, err := Route(d, "", available); err != nil || def.Name != "general-purpose" {
		t.Fatalf("no subagent_type: %v, %v", def.Name, err)
	}
	for _, tc := range []struct{ name, err string }{
		{"nobody", `unknown subagent_type "nobody"; available agents: general-purpose, explore`},
		{"build", `agent "build" is a primary agent, not a subagent; available agents: general-purpose, explore`},
		{"far", `agent "far" has isolation: remote but no url`},
		{"../x", "invalid subagent_type"},
	} {
		if _, err := Route(d, tc.name, available); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want one saying %q", tc.name, err, tc.err)
		}
	}
}
