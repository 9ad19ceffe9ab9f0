package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

const auditCommand = `---
description: Audit the code for TODOs
context: fork
allowed-tools: Read, Grep
---
AUDIT-COMMAND: audit $ARGUMENTS for TODOs and report them.
`

// messagesJSON is the JSON of a request's messages [from, to), without
// cache breakpoints (they sit on a request's last message, wherever that is).
func messagesJSON(t *testing.T, req testkit.Request, from, to int) string {
	t.Helper()
	msgs, _ := req.JSON()["messages"].([]any)
	if len(msgs) < to {
		t.Fatalf("a request with %d messages, want at least %d: %.300s", len(msgs), to, req.Body)
	}
	b, err := json.Marshal(withoutCacheControl(msgs[from:to]))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSF2ForkCommandSharesThePrefix: a context: fork command runs as a
// true fork of the main agent (S-F2): the main agent's system prompt and
// every one of its tools, and its conversation so far byte for byte, so
// the provider's prompt cache serves the fork; a tool outside the
// command's allowed-tools is shown but refuses to run; the fork's final
// text is the command's output.
func TestSF2ForkCommandSharesThePrefix(t *testing.T) {
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		switch {
		case isFork(req) && strings.Contains(body, "AUDIT-COMMAND: audit src/ for TODOs"):
			if !strings.Contains(body, "tool_result") {
				return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_glob", Name: "Glob", Input: map[string]any{"pattern": "*.go"}}}}
			}
			return testkit.Reply{Text: "AUDIT-RESULT: two TODOs"}
		case strings.Contains(body, "NEXT-PROMPT"):
			return testkit.Reply{Text: "next answered"}
		}
		return testkit.Reply{Text: "FIRST-ANSWER: hello to you"}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".claude/commands/audit.md", auditCommand)
	ok(t, e.run("", "-p", "FIRST-PROMPT: hello", "--model", sonnet))
	p := ok(t, e.run("", "-p", "/audit src/", "--model", sonnet, "--continue"))
	if strings.TrimSpace(p.stdout) != "AUDIT-RESULT: two TODOs" {
		t.Fatalf("stdout %q, stderr %q", p.stdout, p.stderr)
	}
	ok(t, e.run("", "-p", "NEXT-PROMPT", "--model", sonnet, "--continue"))
	var forks, mains []testkit.Request
	for _, r := range srv.Requests() {
		if isFork(r) {
			forks = append(forks, r)
		} else {
			mains = append(mains, r)
		}
	}
	if len(forks) != 2 || len(mains) != 2 {
		t.Fatalf("%d fork and %d main requests, want 2 and 2", len(forks), len(mains))
	}
	fork, first, next := forks[0].JSON(), mains[0].JSON(), mains[1].JSON()
	if fmt.Sprint(fork["system"]) != fmt.Sprint(first["system"]) {
		t.Error("the fork's system prompt differs from the main agent's")
	}
	if fmt.Sprint(fork["tools"]) != fmt.Sprint(first["tools"]) {
		t.Errorf("the fork was offered %v, want the main agent's exact tools %v", toolNames(forks[0]), toolNames(mains[0]))
	}
	// The conversation before the command, as the main agent's next
	// request sends it.
	if got, want := messagesJSON(t, forks[0], 0, 2), messagesJSON(t, mains[1], 0, 2); got != want {
		t.Errorf("the fork's conversation differs from the main agent's:\n%s\nvs\n%s", got, want)
	}
	if !strings.Contains(string(forks[1].Body), "Glob is not among this command's allowed-tools (Read, Grep)") {
		t.Errorf("a tool outside allowed-tools ran in the fork: %.600s", forks[1].Body)
	}
	if !strings.Contains(fmt.Sprint(next["messages"]), "AUDIT-RESULT: two TODOs") {
		t.Error("the main session did not record the command's output")
	}
}

const bgAuditCommand = `---
description: Audit in the background
context: fork
background: true
---
BG-AUDIT: audit everything.
`

// TestSF2BackgroundForkCommandNotifies: with background: true the fork
// command starts and returns at once; its result comes to the main agent
// as a task notification, which it answers.
func TestSF2BackgroundForkCommandNotifies(t *testing.T) {
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		switch {
		case isFork(req):
			return testkit.Reply{Text: "BG-RESULT: nothing found"}
		case strings.Contains(body, "task-notification") && strings.Contains(body, "BG-RESULT: nothing found"):
			return testkit.Reply{Text: "MAIN-SAW: the audit found nothing"}
		}
		return testkit.Reply{Text: "unexpected request"}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".claude/commands/bgaudit.md", bgAuditCommand)
	p := ok(t, e.run("", "-p", "/bgaudit", "--model", sonnet, "--output-format", "stream-json", "--verbose"))
	if !strings.Contains(p.stdout, "is running in the background (agentId: ") {
		t.Errorf("the command did not say it started in the background:\n%s", p.stdout)
	}
	ls := lines(t, p.stdout)
	if res := ls[len(ls)-1]; res["result"] != "MAIN-SAW: the audit found nothing" {
		t.Errorf("final result %v, want the main agent's answer to the notification", res["result"])
	}
}

const sumSkill = `---
description: Sums up the project
context: fork
allowed-tools: Read
---
SUM-SKILL: sum up $ARGUMENTS.
`

// TestSF2ModelInvokedForkSkill: a context: fork skill the model invokes
// runs as a fork of the very turn that called Skill — the main agent's
// request and reply, byte for byte — and the fork's answer is the tool's
// result.
func TestSF2ModelInvokedForkSkill(t *testing.T) {
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		switch {
		case isFork(req) && strings.Contains(body, "SUM-SKILL: sum up the code"):
			return testkit.Reply{Text: "SUM-RESULT: a small tool"}
		case isFork(req):
			return testkit.Reply{Text: "a fork without the skill's text"}
		case strings.Contains(body, "tool_result"):
			return testkit.Reply{Text: "done"}
		}
		return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_skill", Name: "Skill", Input: map[string]any{"skill": "sum", "args": "the code"}}}}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".claude/skills/sum/SKILL.md", sumSkill)
	p := ok(t, e.run("", "-p", "SUM-PROMPT: what is this?", "--model", sonnet))
	if strings.TrimSpace(p.stdout) != "done" {
		t.Fatalf("stdout %q, stderr %q", p.stdout, p.stderr)
	}
	var forks, mains []testkit.Request
	for _, r := range srv.Requests() {
		if isFork(r) {
			forks = append(forks, r)
		} else {
			mains = append(mains, r)
		}
	}
	if len(forks) != 1 || len(mains) != 2 {
		t.Fatalf("%d fork and %d main requests, want 1 and 2", len(forks), len(mains))
	}
	fork, main := forks[0].JSON(), mains[0].JSON()
	if fmt.Sprint(fork["system"]) != fmt.Sprint(main["system"]) || fmt.Sprint(fork["tools"]) != fmt.Sprint(main["tools"]) {
		t.Error("the skill's fork does not share the main agent's system prompt and tools")
	}
	// The turn that called Skill: the main request's messages as sent (its
	// per-turn context included), then its reply as the main agent's next
	// request records it.
	if got, want := messagesJSON(t, forks[0], 0, 1), messagesJSON(t, mains[0], 0, 1); got != want {
		t.Errorf("the fork does not start with the request that called Skill:\n%s\nvs\n%s", got, want)
	}
	if got, want := messagesJSON(t, forks[0], 1, 2), messagesJSON(t, mains[1], 1, 2); got != want {
		t.Errorf("the fork does not continue the turn that called Skill:\n%s\nvs\n%s", got, want)
	}
	if !strings.Contains(string(mains[1].Body), "SUM-RESULT: a small tool") {
		t.Errorf("the fork's answer is not the Skill result: %.600s", mains[1].Body)
	}
}

func TestPlainCommandIsAPromptTemplate(t *testing.T) {
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		if strings.Contains(string(req.Body), "EXPLAIN-COMMAND: explain main.go") {
			return testkit.Reply{Text: "explained"}
		}
		return testkit.Reply{Text: "template not expanded"}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".cadre/commands/explain.md", "---\ndescription: Explain a file\n---\nEXPLAIN-COMMAND: explain $1 briefly.\n")
	p := e.run("", "-p", "/explain main.go", "--model", "claude-sonnet-5-5")
	if p.code != 0 || strings.TrimSpace(p.stdout) != "explained" {
		t.Fatalf("exit %d, stdout %q, stderr %q", p.code, p.stdout, p.stderr)
	}
	unknown := e.run("", "-p", "/nope", "--model", "claude-sonnet-5-5")
	if unknown.code == 0 || !strings.Contains(unknown.stderr, "unknown command /nope") || !strings.Contains(unknown.stderr, "/explain") {
		t.Errorf("unknown command: exit %d, %q", unknown.code, unknown.stderr)
	}
}

// TestUntrustedForkCommandGrantsNothing is issue 22's fork-command grant:
// an untrusted project's `context: fork` command with `allowed-tools:
// Bash` still restricts its child to Bash, but no longer allows it, so
// headless its Bash call is refused; trusted, it runs.
func TestUntrustedForkCommandGrantsNothing(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
			if !strings.Contains(string(req.Body), "tool_result") {
				return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_b", Name: "Bash", Input: map[string]any{"command": "touch forked-bash"}}}}
			}
			return testkit.Reply{Text: "done"}
		})
		e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
		e.write(".claude/commands/grab.md", "---\ndescription: grab\ncontext: fork\nallowed-tools: Bash\n---\nGRAB\n")
		args := []string{"-p", "/grab", "--model", "claude-sonnet-5-5"}
		if trusted {
			args = append(args, "--trust-workspace")
		}
		p := e.run("", args...)
		_, err := os.Stat(filepath.Join(e.dir, "forked-bash"))
		if ran := err == nil; ran != trusted {
			t.Errorf("trusted=%v: Bash ran = %v\n%s", trusted, ran, p.stderr)
		}
		if !trusted && !strings.Contains(p.stderr, "allowed-tools") {
			t.Errorf("the warning does not name the skipped allowed-tools:\n%s", p.stderr)
		}
	}
}
