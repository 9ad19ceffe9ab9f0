package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// These tests cover what a repository set up for Claude Code brings with
// it (issue 12): agent fields that act, skills, context files, memory,
// TodoWrite and WebFetch.

// thinkerFile asks for high effort, as a Claude Code agent file does.
const thinkerFile = `---
name: thinker
description: Thinks hard about a problem.
effort: high
---
THINKER-PROMPT: think it through.
`

// spawnThinker is a main agent that calls Agent(thinker) once.
func spawnThinker(req testkit.Request) testkit.Reply {
	body := string(req.Body)
	switch {
	case strings.Contains(body, "THINKER-PROMPT"):
		return testkit.Reply{Text: "thought"}
	case strings.Contains(body, "tool_result") || strings.Contains(body, `"role":"tool"`):
		return testkit.Reply{Text: "done"}
	}
	return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_think_1", Name: "Agent", Input: map[string]any{
		"description": "think", "prompt": "Think about it", "subagent_type": "thinker",
	}}}}
}

// The OpenAI side (reasoning_effort) goes to the official API only, so it
// is tested in package openai: a fake server is a compatible server, which
// gets no reasoning_effort.
func TestAgentEffortReachesTheProvider(t *testing.T) {
	for _, tc := range []struct {
		provider, model string
		check           func(t *testing.T, main, child map[string]any)
	}{
		{"anthropic", "claude-sonnet-5-5", func(t *testing.T, main, child map[string]any) {
			th, _ := child["thinking"].(map[string]any)
			if th == nil || th["type"] != "enabled" || th["budget_tokens"] != float64(31999) {
				t.Errorf("the effort: high child sent thinking %v, want enabled with budget_tokens 31999", child["thinking"])
			}
			if mt, _ := child["max_tokens"].(float64); mt <= 31999 {
				t.Errorf("child max_tokens %v leaves no room above the thinking budget", child["max_tokens"])
			}
			if main["thinking"] != nil {
				t.Errorf("the main agent sent thinking %v; only the agent asked for it", main["thinking"])
			}
		}},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			e := newEnv(t)
			e.write(".claude/agents/thinker.md", thinkerFile)
			var reqs func() []testkit.Request
			if tc.provider == "anthropic" {
				srv := testkit.NewAnthropic(t, spawnThinker)
				e.set("ANTHROPIC_BASE_URL=" + srv.URL)
				reqs = srv.Requests
			}
			p := e.run("", "-p", "think", "--model", tc.model)
			if p.code != 0 {
				t.Fatalf("exit %d: %s\n%s", p.code, p.stderr, p.stdout)
			}
			var main, child map[string]any
			for _, r := range reqs() {
				if strings.Contains(string(r.Body), "THINKER-PROMPT") {
					child = r.JSON()
				} else if main == nil {
					main = r.JSON()
				}
			}
			if child == nil || main == nil {
				t.Fatalf("want a main and a child request, got %d requests", len(reqs()))
			}
			tc.check(t, main, child)
		})
	}
}

// firstUserText is the text of the first user message's blocks, in order.
func firstUserBlocks(t *testing.T, req testkit.Request) []string {
	t.Helper()
	msgs, _ := req.JSON()["messages"].([]any)
	if len(msgs) == 0 {
		t.Fatal("a request without messages")
	}
	first := msgs[0].(map[string]any)
	var out []string
	switch c := first["content"].(type) {
	case string:
		out = append(out, c)
	case []any:
		for _, b := range c {
			if s, ok := b.(map[string]any)["text"].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func TestContextFilesReachTheModel(t *testing.T) {
	for _, tc := range []struct{ file, rule string }{
		{"CLAUDE.md", "CLAUDE-RULE: answer in haiku."},
		{"AGENTS.md", "AGENTS-RULE: run go vet before you finish."},
	} {
		t.Run(tc.file, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, spawnReviewer)
			e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
			e.write(tc.file, tc.rule+"\nSee @docs/more.md.\n")
			e.write("docs/more.md", "IMPORTED-RULE: keep functions short.\n")
			e.write(".claude/agents/reviewer.md", reviewerFile)
			p := e.run("", "-p", "review my code", "--model", "claude-sonnet-5-5")
			if p.code != 0 {
				t.Fatalf("exit %d: %s", p.code, p.stderr)
			}
			reqs := srv.Requests()
			if len(reqs) < 3 {
				t.Fatalf("%d requests, want the main agent's two and the reviewer's", len(reqs))
			}
			for i, r := range reqs {
				who := "main"
				if isChild(r) {
					who = "reviewer"
				}
				blocks := firstUserBlocks(t, r)
				if len(blocks) < 2 {
					t.Fatalf("request %d (%s): first message %q, want the context block then the prompt", i, who, blocks)
				}
				ctx := blocks[0]
				if !strings.HasPrefix(ctx, "<system-reminder>") || !strings.Contains(ctx, tc.rule) || !strings.Contains(ctx, "IMPORTED-RULE") {
					t.Errorf("request %d (%s) opens with %q, want a system-reminder holding %s and its import", i, who, ctx, tc.file)
				}
				if sys, _ := r.JSON()["system"].([]any); strings.Contains(fmt.Sprint(sys), tc.rule) {
					t.Errorf("request %d (%s): %s went into the system prompt; Claude Code sends it in the first user message", i, who, tc.file)
				}
			}
		})
	}
}

const greetSkill = `---
description: Greets people warmly
allowed-tools: Bash(echo:*)
---
GREET-SKILL: say hello to $ARGUMENTS in French.
`

// The Skill tool brings the skill's body into the conversation, and its
// allowed-tools let a call through that the headless default mode would
// refuse.
func TestSkillToolBringsTheSkillIn(t *testing.T) {
	srv := testkit.NewAnthropic(t, testkit.Queue(
		testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_skill", Name: "Skill", Input: map[string]any{"skill": "greet", "args": "Bob"}}}},
		testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_echo", Name: "Bash", Input: map[string]any{"command": "echo bonjour"}}}},
		testkit.Reply{Text: "done"},
	))
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".claude/skills/greet/SKILL.md", greetSkill)
	// The skill's allowed-tools grant only in a trusted project.
	p := e.run("", "-p", "greet Bob", "--model", "claude-sonnet-5-5", "--trust-workspace")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	var skillTool string
	for _, tl := range reqs[0].JSON()["tools"].([]any) {
		if m := tl.(map[string]any); m["name"] == "Skill" {
			skillTool, _ = m["description"].(string)
		}
	}
	if !strings.Contains(skillTool, "- greet: Greets people warmly") {
		t.Errorf("the Skill tool's description does not list the skill: %q", skillTool)
	}
	if body := string(reqs[1].Body); !strings.Contains(body, "GREET-SKILL: say hello to Bob in French.") {
		t.Errorf("the skill's body did not reach the model: %s", body)
	}
	if body := string(reqs[2].Body); !strings.Contains(body, "bonjour") || strings.Contains(body, "requires approval") {
		t.Errorf("the skill's allowed-tools did not let echo run: %s", body)
	}
}

const memoFile = `---
name: memo
description: Remembers things across runs.
memory: project
skills: greet
initialPrompt: INITIAL-PROMPT-FIRST
color: cyan
---
MEMO-PROMPT: you remember things.
`

// An agent's skills are preloaded and its initialPrompt goes first; its
// memory is kept across runs and it may write it without asking.
func TestAgentMemorySkillsAndInitialPrompt(t *testing.T) {
	e := newEnv(t)
	e.write(".claude/skills/greet/SKILL.md", greetSkill)
	e.write(".claude/agents/memo.md", memoFile)
	index := filepath.Join(e.dir, ".claude", "agent-memory", "memo", "MEMORY.md")
	child := func(req testkit.Request) bool { return strings.Contains(string(req.Body), "MEMO-PROMPT") }
	handler := func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		switch {
		case child(req) && !strings.Contains(body, "tool_result"):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_w", Name: "Write", Input: map[string]any{
				"file_path": index, "content": "- REMEMBERED-FACT: the user likes tabs\n",
			}}}}
		case child(req):
			return testkit.Reply{Text: "remembered"}
		case strings.Contains(body, "tool_result"):
			return testkit.Reply{Text: "done"}
		}
		return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_m", Name: "Agent", Input: map[string]any{
			"description": "remember", "prompt": "TASK-PROMPT", "subagent_type": "memo",
		}}}}
	}
	srv := testkit.NewAnthropic(t, handler)
	e.set("ANTHROPIC_BASE_URL=" + srv.URL)
	for run := 1; run <= 2; run++ {
		p := e.run("", "-p", "remember", "--model", "claude-sonnet-5-5")
		if p.code != 0 {
			t.Fatalf("run %d: exit %d: %s", run, p.code, p.stderr)
		}
	}
	data, err := os.ReadFile(index)
	if err != nil || !strings.Contains(string(data), "REMEMBERED-FACT") {
		t.Fatalf("the agent's write to its memory did not land: %q, %v", data, err)
	}
	var firsts []testkit.Request
	for _, r := range srv.Requests() {
		if child(r) && !strings.Contains(string(r.Body), "tool_result") {
			firsts = append(firsts, r)
		}
	}
	if len(firsts) != 2 {
		t.Fatalf("%d first child requests, want one per run", len(firsts))
	}
	for i, r := range firsts {
		sys := fmt.Sprint(r.JSON()["system"])
		if !strings.Contains(sys, filepath.Dir(index)) {
			t.Errorf("run %d: the child's system prompt does not name its memory directory", i+1)
		}
		if remembered := strings.Contains(sys, "REMEMBERED-FACT"); remembered != (i == 1) {
			t.Errorf("run %d: memory in the system prompt = %v, want %v", i+1, remembered, i == 1)
		}
		blocks := firstUserBlocks(t, r)
		var rest []string
		for _, b := range blocks {
			if !strings.HasPrefix(b, "<system-reminder>") {
				rest = append(rest, b)
			}
		}
		if len(rest) != 3 || rest[0] != "INITIAL-PROMPT-FIRST" || rest[1] != "TASK-PROMPT" || !strings.Contains(rest[2], "GREET-SKILL: say hello to") {
			t.Errorf("run %d: the child's first message is %q, want initialPrompt, the task, then the greet skill", i+1, rest)
		}
	}
}

func TestTodoWriteIsShownAndStreamed(t *testing.T) {
	todo := testkit.ToolCall{ID: "toolu_todo", Name: "TodoWrite", Input: map[string]any{"todos": []map[string]any{
		{"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
		{"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"},
	}}}
	for _, format := range []string{"text", "stream-json"} {
		t.Run(format, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{ToolCalls: []testkit.ToolCall{todo}}, testkit.Reply{Text: "done"}))
			e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
			args := []string{"-p", "plan it", "--model", "claude-sonnet-5-5", "--output-format", format}
			if format == "stream-json" {
				args = append(args, "--verbose")
			}
			p := e.run("", args...)
			if p.code != 0 {
				t.Fatalf("exit %d: %s", p.code, p.stderr)
			}
			if format == "text" {
				if !strings.Contains(p.stderr, "[main] todos 1/2: ✓ Read the code; ▸ Writing tests") {
					t.Errorf("stderr does not show the list: %q", p.stderr)
				}
				return
			}
			var found bool
			for _, l := range lines(t, p.stdout) {
				if r, ok := l["tool_use_result"].(map[string]any); ok && l["type"] == "user" {
					news, _ := r["newTodos"].([]any)
					olds, ok := r["oldTodos"].([]any)
					found = len(news) == 2 && ok && len(olds) == 0
				}
			}
			if !found {
				t.Errorf("no user line carries tool_use_result {oldTodos: [], newTodos: [2 items]}:\n%s", p.stdout)
			}
		})
	}
}

// WebFetch against a local server: a domain rule allows it; without one a
// headless run cannot approve it.
func TestWebFetchFollowsDomainRules(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><h1>Release notes</h1><p>Version <b>2.4</b> is out.</p></body></html>")
	}))
	defer site.Close()
	for _, tc := range []struct {
		name  string
		args  []string
		wants string
	}{
		{"allowed", []string{"--allowedTools", "WebFetch(domain:127.0.0.1)"}, "# Release notes"},
		{"other domain", []string{"--allowedTools", "WebFetch(domain:example.com)"}, "requires approval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, testkit.Queue(
				testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_web", Name: "WebFetch", Input: map[string]any{"url": site.URL + "/notes", "prompt": "which version?"}}}},
				testkit.Reply{Text: "done"},
			))
			e := newEnv(t).set("ANTHROPIC_BASE_URL="+srv.URL, "CADRE_WEBFETCH_ALLOW_PRIVATE=1")
			p := e.run("", append([]string{"-p", "read the notes", "--model", "claude-sonnet-5-5"}, tc.args...)...)
			if p.code != 0 {
				t.Fatalf("exit %d: %s", p.code, p.stderr)
			}
			if body := string(srv.Requests()[1].Body); !strings.Contains(body, tc.wants) {
				t.Errorf("the tool result lacks %q: %s", tc.wants, body)
			}
		})
	}
}
