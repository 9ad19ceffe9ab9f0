package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// reviewerFile is a Claude Code agent file, exactly as Claude Code reads it.
const reviewerFile = `---
name: reviewer
description: Reviews code for bugs. Use after changes.
tools: Read, Grep
model: inherit
---
REVIEWER-PROMPT: you review code carefully and report findings with file:line.
`

func isChild(req testkit.Request) bool { return strings.Contains(string(req.Body), "REVIEWER-PROMPT") }

// toolNames lists the tools a request offered, for either wire format.
func toolNames(req testkit.Request) []string {
	var names []string
	for _, tl := range req.JSON()["tools"].([]any) {
		m := tl.(map[string]any)
		if fn, ok := m["function"].(map[string]any); ok {
			m = fn
		}
		names = append(names, m["name"].(string))
	}
	slices.Sort(names)
	return names
}

// spawnReviewer is a main agent that calls Agent(reviewer) once, then
// quotes the tool result; the reviewer answers at once.
func spawnReviewer(req testkit.Request) testkit.Reply {
	body := string(req.Body)
	if isChild(req) {
		return testkit.Reply{Text: "REVIEW: stock.go:13 accepts negative counts."}
	}
	if strings.Contains(body, "tool_result") || strings.Contains(body, `"role":"tool"`) {
		if strings.Contains(body, "REVIEW: stock.go:13") {
			return testkit.Reply{Text: "The reviewer found: stock.go:13 accepts negative counts."}
		}
		return testkit.Reply{Text: "The reviewer said something else."}
	}
	return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_spawn_1", Name: "Agent", Input: map[string]any{
		"description": "review the code", "prompt": "Review stock.go", "subagent_type": "reviewer",
	}}}}
}

func TestSubagentFromClaudeCodeFile(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			e := newEnv(t)
			e.write(".claude/agents/reviewer.md", reviewerFile)
			var reqs func() []testkit.Request
			model := "claude-sonnet-5-5"
			if provider == "anthropic" {
				srv := testkit.NewAnthropic(t, spawnReviewer)
				e.set("ANTHROPIC_BASE_URL=" + srv.URL)
				reqs = srv.Requests
			} else {
				srv := testkit.NewOpenAI(t, spawnReviewer)
				e.set("OPENAI_BASE_URL=" + srv.URL)
				reqs = srv.Requests
				model = "openai:gpt-6-sol"
			}
			p := e.run("", "-p", "review my code", "--output-format", "stream-json", "--verbose", "--model", model)
			if p.code != 0 {
				t.Fatalf("exit %d: %s\n%s", p.code, p.stderr, p.stdout)
			}
			// The child's request: the file's body as system prompt, exactly its tools.
			var child *testkit.Request
			for _, r := range reqs() {
				if isChild(r) {
					child = &r
				}
			}
			if child == nil {
				t.Fatal("no request carried the reviewer's prompt")
			}
			if got := toolNames(*child); !slices.Equal(got, []string{"Grep", "Read"}) {
				t.Errorf("child tools %v, want exactly [Grep Read]", got)
			}
			if main := toolNames(reqs()[0]); !slices.Contains(main, "Agent") {
				t.Errorf("main tools %v lack Agent", main)
			}
			// The stream: the child's lines carry the Agent tool_use id.
			var spawnID string
			var childLines, parentResult int
			for _, l := range lines(t, p.stdout) {
				if l["type"] == "assistant" && l["parent_tool_use_id"] == nil {
					for _, c := range l["message"].(map[string]any)["content"].([]any) {
						if c.(map[string]any)["name"] == "Agent" {
							spawnID = c.(map[string]any)["id"].(string)
						}
					}
				}
				if pid, ok := l["parent_tool_use_id"].(string); ok {
					if pid != spawnID || spawnID == "" {
						t.Errorf("child line parent_tool_use_id %q, want the Agent call's id %q", pid, spawnID)
					}
					if l["subagent_type"] != "reviewer" || l["agent_id"] == nil || l["session_id"] != lines(t, p.stdout)[0]["session_id"] {
						t.Errorf("child line tags: %v", l)
					}
					childLines++
				}
				if l["type"] == "user" && l["parent_tool_use_id"] == nil && strings.Contains(fmt.Sprint(l["message"]), "REVIEW: stock.go:13") {
					parentResult++
				}
			}
			if childLines < 2 { // its prompt and its answer
				t.Errorf("%d child lines, want at least 2", childLines)
			}
			if parentResult != 1 {
				t.Errorf("the child's text did not come back in the Agent tool_result")
			}
			ls := lines(t, p.stdout)
			if res := ls[len(ls)-1]; res["subtype"] != "success" || !strings.Contains(res["result"].(string), "negative counts") {
				t.Errorf("result %v", res)
			}
			// Without --verbose the child stays quiet.
			quiet := e.run("", "-p", "review my code", "--output-format", "stream-json", "--model", model)
			for _, l := range lines(t, quiet.stdout) {
				if l["parent_tool_use_id"] != nil {
					t.Errorf("child line without --verbose: %v", l)
				}
			}
		})
	}
}

func TestDeniedSubagentMakesNoChildRequest(t *testing.T) {
	srv := testkit.NewAnthropic(t, spawnReviewer)
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".claude/agents/reviewer.md", reviewerFile)
	e.write(".cadre/settings.json", `{"permissions": {"task": {"*": "allow", "reviewer": "deny"}}}`)
	p := e.run("", "-p", "review", "--output-format", "stream-json", "--model", "claude-sonnet-5-5")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	rs := toolResults(t, p.stdout)
	if len(rs) != 1 || rs[0]["is_error"] != true || !strings.Contains(fmt.Sprint(rs[0]["content"]), `"reviewer"`) || !strings.Contains(fmt.Sprint(rs[0]["content"]), "deny") {
		t.Fatalf("tool result %v, want an error naming the rule", rs)
	}
	for _, r := range srv.Requests() {
		if isChild(r) {
			t.Fatal("a denied agent's request reached the model")
		}
	}
}

func TestTenAgentCallsRunConcurrently(t *testing.T) {
	const n = 10
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		if strings.Contains(body, "WORKER") && !strings.Contains(body, "tool_result") {
			// Hold each child until all ten have arrived: only concurrent
			// children can get past this.
			mu.Lock()
			arrived++
			if arrived == n {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
				return testkit.Reply{Text: "worker done"}
			case <-time.After(20 * time.Second):
				return testkit.Reply{Text: "worker timed out waiting for its siblings"}
			}
		}
		if strings.Contains(body, "tool_result") {
			return testkit.Reply{Text: "all done"}
		}
		var calls []testkit.ToolCall
		for i := range n {
			calls = append(calls, testkit.ToolCall{Name: "Agent", Input: map[string]any{
				"description": fmt.Sprintf("worker %d", i), "prompt": fmt.Sprintf("WORKER %d: say done", i),
			}})
		}
		return testkit.Reply{ToolCalls: calls}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	p := e.run("", "-p", "fan out", "--output-format", "stream-json", "--model", "claude-sonnet-5-5")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	rs := toolResults(t, p.stdout)
	if len(rs) != n {
		t.Fatalf("%d results", len(rs))
	}
	for _, r := range rs {
		if r["is_error"] == true || !strings.Contains(fmt.Sprint(r["content"]), "worker done") {
			t.Errorf("result %v", r)
		}
	}
	// Every child request started before any of them ended.
	var lastStart, firstEnd time.Time
	for _, r := range srv.Requests() {
		if !strings.Contains(string(r.Body), "WORKER") || strings.Contains(string(r.Body), "tool_result") {
			continue
		}
		if r.Start.After(lastStart) {
			lastStart = r.Start
		}
		if firstEnd.IsZero() || r.End.Before(firstEnd) {
			firstEnd = r.End
		}
	}
	if !lastStart.Before(firstEnd) {
		t.Errorf("child requests did not overlap: last start %v, first end %v", lastStart, firstEnd)
	}
}

func TestTraversalInSubagentTypeOrSessionIDIsRefused(t *testing.T) {
	for _, tc := range []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"description": "x", "prompt": "x", "subagent_type": "../x"}, "invalid subagent_type"},
		{map[string]any{"description": "x", "prompt": "x", "session_id": "../x"}, "invalid session_id"},
		{map[string]any{"description": "x", "prompt": "x", "subagent_type": "nobody"}, "unknown subagent_type"},
		{map[string]any{"description": "x", "prompt": "x", "session_id": "0190a000-0000-7000-8000-00000000dead"}, "no agent session"},
		{map[string]any{"description": "x", "prompt": "x", "timeout_seconds": 601}, "timeout_seconds must be between 0 and 600"},
		{map[string]any{"description": "x", "prompt": "x", "name": "../evil"}, "invalid name"},
	} {
		t.Run(fmt.Sprint(tc.input), func(t *testing.T) {
			srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
				if strings.Contains(string(req.Body), "tool_result") {
					return testkit.Reply{Text: "ok"}
				}
				return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: tc.input}}}
			})
			e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
			p := e.run("", "-p", "go", "--output-format", "stream-json", "--model", "claude-sonnet-5-5")
			rs := toolResults(t, p.stdout)
			if p.code != 0 || len(rs) != 1 || rs[0]["is_error"] != true || !strings.Contains(fmt.Sprint(rs[0]["content"]), tc.want) {
				t.Fatalf("exit %d, results %v; want an error containing %q", p.code, rs, tc.want)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("%d requests: the refused call must not reach a child model", n)
			}
		})
	}
}

var sessionRE = regexp.MustCompile(`session_id: ([0-9a-f-]{36})`)

func TestContinueAChildBySessionID(t *testing.T) {
	var childSession string
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		if isChild(req) {
			if strings.Contains(body, "FIRST-FINDING") {
				return testkit.Reply{Text: "SECOND: I still remember FIRST-FINDING."}
			}
			return testkit.Reply{Text: "FIRST-FINDING"}
		}
		switch strings.Count(body, `"tool_use_id"`) {
		case 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{"description": "review", "prompt": "first", "subagent_type": "reviewer"}}}}
		case 1:
			if m := sessionRE.FindStringSubmatch(body); m != nil {
				childSession = m[1]
			}
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{"description": "review more", "prompt": "second", "session_id": childSession}}}}
		}
		return testkit.Reply{Text: "done"}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".claude/agents/reviewer.md", reviewerFile)
	p := e.run("", "-p", "review twice", "--output-format", "stream-json", "--model", "claude-sonnet-5-5")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	rs := toolResults(t, p.stdout)
	if len(rs) != 2 || !strings.Contains(fmt.Sprint(rs[1]["content"]), "I still remember FIRST-FINDING") {
		t.Fatalf("second result %v: the continued child lacked its context", rs)
	}
	if childSession == "" {
		t.Fatal("no session_id in the first result")
	}
}
