package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// mainAgentFile is an agent definition the main agent can run as.
const mainAgentFile = `---
name: reviewer
description: Reviews code
tools: Read, Grep
model: claude-haiku-4-5
permissionMode: plan
---
REVIEWER-SYSTEM-PROMPT: you review code.
`

// --agent runs the main agent as the named definition: its prompt is the
// system prompt, its tools are the pool, its model and permission mode
// apply unless flags give their own; an unknown name fails the start.
func TestAgentFlag(t *testing.T) {
	stream := []string{"-p", "hi", "--output-format=stream-json", "--verbose", "--trust-workspace"}
	t.Run("runs as the definition", func(t *testing.T) {
		e, srv := anthropicEnv(t, answerOnly)
		e.write(".claude/agents/reviewer.md", mainAgentFile)
		p := ok(t, e.run("", append(stream, "--agent=reviewer")...))
		req := srv.Requests()[0]
		if m := req.JSON()["model"]; m != "claude-haiku-4-5" {
			t.Errorf("request model %v, want the agent's claude-haiku-4-5", m)
		}
		sys, _ := json.Marshal(req.JSON()["system"])
		if !strings.Contains(string(sys), "REVIEWER-SYSTEM-PROMPT") {
			t.Errorf("system prompt lacks the agent's prompt: %s", sys)
		}
		if got := requestTools(t, req); !slices.Equal(got, []string{"Grep", "Read"}) && !slices.Equal(got, []string{"Read", "Grep"}) {
			t.Errorf("request tools %v, want the agent's Read, Grep", got)
		}
		if m := initLine(t, p.stdout)["permissionMode"]; m != "plan" {
			t.Errorf("init permissionMode %v, want the agent's plan", m)
		}
	})
	t.Run("flags win over the definition", func(t *testing.T) {
		e, srv := anthropicEnv(t, answerOnly)
		e.write(".claude/agents/reviewer.md", mainAgentFile)
		p := ok(t, e.run("", append(stream, "--agent=reviewer", "--model=claude-sonnet-5-5", "--permission-mode=acceptEdits")...))
		if m := srv.Requests()[0].JSON()["model"]; m != "claude-sonnet-5-5" {
			t.Errorf("request model %v, want --model's", m)
		}
		if m := initLine(t, p.stdout)["permissionMode"]; m != "acceptEdits" {
			t.Errorf("init permissionMode %v, want --permission-mode's", m)
		}
	})
	t.Run("unknown name", func(t *testing.T) {
		e, srv := anthropicEnv(t, answerOnly)
		e.write(".claude/agents/reviewer.md", mainAgentFile)
		p := e.run("", append(stream, "--agent=nobody")...)
		if p.code == 0 {
			t.Fatalf("exit 0 with an unknown --agent:\n%s", p.stdout)
		}
		if !strings.Contains(p.stderr+p.stdout, `"nobody"`) || !strings.Contains(p.stderr+p.stdout, "reviewer") {
			t.Errorf("the failure does not name the agent and the known ones:\nstdout %s\nstderr %s", p.stdout, p.stderr)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%d model requests after a start failure", n)
		}
	})
}
