package skill

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/command"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/tool"
)

func load(t *testing.T, files map[string]string) *command.Set {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, problems := command.Load(dir, "")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return set
}

func TestSkillTool(t *testing.T) {
	set := load(t, map[string]string{
		".claude/skills/greet/SKILL.md":  "---\ndescription: Greets people warmly\nallowed-tools: Bash(echo:*)\n---\nSay hello to $ARGUMENTS in French.\n",
		".claude/skills/secret/SKILL.md": "---\ndescription: Only for users\ndisable-model-invocation: true\n---\nhidden\n",
		".claude/commands/plain.md":      "a command, not a skill\n",
	})
	grants := &permission.Grants{}
	st := Tool(set, grants, nil)
	if st == nil {
		t.Fatal("no tool for a set with skills")
	}
	desc := st.Info().Description
	if !strings.Contains(desc, "- greet: Greets people warmly") || strings.Contains(desc, "secret") || strings.Contains(desc, "plain") {
		t.Errorf("description lists the wrong skills:\n%s", desc)
	}
	call := func(in string) tool.Result {
		t.Helper()
		res, err := st.Call(context.Background(), tool.Env{SessionID: "s1"}, json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := call(`{"skill":"greet","args":"Bob"}`)
	if res.IsError || len(res.Content) != 2 || !strings.Contains(res.Content[1].Text, "Say hello to Bob in French.") || !strings.Contains(res.Content[1].Text, "Base directory for this skill: ") {
		t.Errorf("result %+v: want the launch line and the expanded body", res)
	}
	if g := grants.Rules("s1"); len(g) != 1 || g[0].String() != "Bash(echo:*)" {
		t.Errorf("grants %v, want the skill's allowed-tools", g)
	}
	for _, in := range []string{`{"skill":"secret"}`, `{"skill":"plain"}`, `{"skill":"nope"}`} {
		if res := call(in); !res.IsError || !strings.Contains(res.Content[0].Text, "greet") {
			t.Errorf("%s: %+v, want an error listing the invocable skills", in, res)
		}
	}
	if Tool(load(t, map[string]string{".claude/commands/plain.md": "x\n"}), nil, nil) != nil {
		t.Error("a tool was offered with no skills")
	}
}

func TestPreload(t *testing.T) {
	set := load(t, map[string]string{".cadre/skills/style/SKILL.md": "---\ndescription: House style\n---\nUse tabs.\n"})
	text, missing := Preload(set, []string{"style", "ghost"})
	if !strings.Contains(text, "Use tabs.") || len(missing) != 1 || missing[0] != "ghost" {
		t.Errorf("Preload = %q, missing %v", text, missing)
	}
}

// TestUntrustedSkillGrantsNothing: a skill of a project the user has not
// trusted still loads, but its allowed-tools grant no tool (issue 22).
func TestUntrustedSkillGrantsNothing(t *testing.T) {
	set := load(t, map[string]string{
		".claude/skills/deploy/SKILL.md": "---\ndescription: Deploys\nallowed-tools: Bash\n---\nDeploy it.\n",
	}).Narrowed(func(c *command.Command) { c.NoGrant = true })
	grants := &permission.Grants{}
	res, err := Tool(set, grants, nil).Call(context.Background(), tool.Env{SessionID: "s1"}, json.RawMessage(`{"skill":"deploy"}`))
	if err != nil || res.IsError || !strings.Contains(res.Content[1].Text, "Deploy it.") {
		t.Fatalf("the skill's prompt must still work: %+v %v", res, err)
	}
	if g := grants.Rules("s1"); len(g) != 0 {
		t.Errorf("an untrusted skill granted %v", g)
	}
}
