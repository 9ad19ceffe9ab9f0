package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

const (
	dirStart = `\u003cfork-boilerplate\u003e`
	dirEnd   = `\u003c/fork-boilerplate\u003e`
)

func isFork(req testkit.Request) bool { return strings.Contains(string(req.Body), "fork-boilerplate") }

// forkTask is the task marker inside a fork request's directive: every
// fork's body also holds the parent's reply, with all the tasks in it.
func forkTask(body string) string {
	i := strings.Index(body, dirStart)
	j := strings.Index(body, dirEnd)
	if i < 0 || j < i {
		return ""
	}
	d := body[i:j]
	for n := 1; n <= 9; n++ {
		if m := fmt.Sprintf("FORK-TASK-%d", n); strings.Contains(d, m) {
			return m
		}
	}
	return ""
}

// withoutDirective cuts the fork's directive out of a request body, and
// reports where it started.
func withoutDirective(t *testing.T, body string) (string, int) {
	t.Helper()
	i := strings.Index(body, dirStart)
	j := strings.Index(body, dirEnd)
	if i < 0 || j < i {
		t.Fatalf("no directive in a fork request: %.300s", body)
	}
	return body[:i] + body[j+len(dirEnd):], i
}

// threeForks is a main agent that forks three times in one message; each
// fork answers with its task's marker. fork1 tries to fork again.
func threeForks(t *testing.T) testkit.Handler {
	return func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		if isFork(req) {
			task := forkTask(body)
			if task == "FORK-TASK-1" && !strings.Contains(body, "forks cannot start agents") {
				return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{"description": "nested", "prompt": "fork again"}}}}
			}
			return testkit.Reply{Text: strings.Replace(task, "TASK", "DONE", 1)}
		}
		if strings.Count(body, "task-notification") >= 1 && strings.Count(body, "FORK-DONE-") >= 3 {
			return testkit.Reply{Text: "all three forks reported"}
		}
		if strings.Contains(body, "tool_result") {
			return testkit.Reply{Text: "waiting for the forks"}
		}
		var calls []testkit.ToolCall
		for i := 1; i <= 3; i++ {
			calls = append(calls, testkit.ToolCall{Name: "Agent", Input: map[string]any{
				"description": fmt.Sprintf("fork %d", i), "prompt": fmt.Sprintf("FORK-TASK-%d: look into part %d", i, i),
			}})
		}
		return testkit.Reply{Text: "Splitting the work three ways.", ToolCalls: calls}
	}
}

func TestThreeForksShareTheParentsPrefix(t *testing.T) {
	srv := testkit.NewAnthropic(t, threeForks(t))
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".cadre/settings.json", `{"subagents": {"fork": true}}`)
	p := e.run("", "-p", "PARENT-PROMPT: study the code", "--output-format", "stream-json", "--model", "claude-sonnet-5-5")
	if p.code != 0 {
		t.Fatalf("exit %d: %s\n%s", p.code, p.stderr, p.stdout)
	}
	var first []string // each fork's first request
	seen := map[string]bool{}
	var mainFirst map[string]any
	for _, r := range srv.Requests() {
		if !isFork(r) {
			if mainFirst == nil {
				mainFirst = r.JSON()
			}
			continue
		}
		if task := forkTask(string(r.Body)); task != "" && !seen[task] {
			seen[task] = true
			first = append(first, string(r.Body))
		}
	}
	if len(first) != 3 {
		t.Fatalf("%d forks made requests, want 3", len(first))
	}
	base, at := withoutDirective(t, first[0])
	for i, b := range first[1:] {
		rest, at2 := withoutDirective(t, b)
		if rest != base || at2 != at {
			n := 0
			for n < len(rest) && n < len(base) && rest[n] == base[n] {
				n++
			}
			t.Fatalf("fork %d's request differs from fork 1's outside the directive, at byte %d: …%.80s… vs …%.80s…", i+2, n, base[max(0, n-20):], rest[max(0, n-20):])
		}
	}
	// Providers cache in the order tools, system, messages; the bodies
	// differ only in the directive, so all but the directive is shared.
	t.Logf("shared prefix: %d of %d bytes (%.1f%%)", len(base), len(first[0]), 100*float64(len(base))/float64(len(first[0])))
	// The fork sees the parent's history, system prompt and tools.
	var fork map[string]any
	json.Unmarshal([]byte(first[0]), &fork)
	if !strings.Contains(first[0], "PARENT-PROMPT") || !strings.Contains(first[0], "Splitting the work three ways") {
		t.Error("the fork does not see the parent's history")
	}
	if fmt.Sprint(fork["system"]) != fmt.Sprint(mainFirst["system"]) || fmt.Sprint(fork["tools"]) != fmt.Sprint(mainFirst["tools"]) {
		t.Error("the fork's system prompt or tools differ from the parent's")
	}
	// The fork's request starts with the parent's request that forked,
	// message for message, the per-turn context the parent's last user
	// message carried included. Only the cache breakpoints move: the
	// parent's was on its last message, which the fork's request carries on.
	parentMsgs, _ := withoutCacheControl(mainFirst["messages"]).([]any)
	forkMsgs, _ := withoutCacheControl(fork["messages"]).([]any)
	if len(parentMsgs) == 0 || len(forkMsgs) <= len(parentMsgs) {
		t.Fatalf("the parent's request has %d messages, the fork's %d", len(parentMsgs), len(forkMsgs))
	}
	if last, _ := json.Marshal(parentMsgs[len(parentMsgs)-1]); !strings.Contains(string(last), "system-reminder") {
		t.Fatalf("the parent's last user message carries no per-turn context: %.300s", last)
	}
	for i, m := range parentMsgs {
		pm, _ := json.Marshal(m)
		fm, _ := json.Marshal(forkMsgs[i])
		if string(pm) != string(fm) {
			t.Errorf("message %d of the fork's request differs from the parent's:\nparent %.400s\nfork   %.400s", i, pm, fm)
		}
	}
	// A cache breakpoint ends the shared prefix: on the last placeholder.
	prefix := first[0][:at]
	last := strings.LastIndex(prefix, `"tool_use_id"`)
	if last < 0 || !strings.Contains(prefix[last:], "cache_control") {
		t.Error("no cache breakpoint on the last placeholder")
	}
	// Forking inside a fork is refused.
	refused := false
	for _, r := range srv.Requests() {
		if isFork(r) && strings.Contains(string(r.Body), "forks cannot start agents") {
			refused = true
		}
	}
	if !refused {
		t.Error("a fork's Agent call was not refused")
	}
	ls := lines(t, p.stdout)
	if res := ls[len(ls)-1]; res["result"] != "all three forks reported" {
		t.Errorf("final result %v", res["result"])
	}
}

// withoutCacheControl is v, a decoded request body, without its
// cache_control fields.
func withoutCacheControl(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "cache_control" {
				out[k] = withoutCacheControl(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutCacheControl(e)
		}
		return out
	}
	return v
}

func TestWithoutTheGateAnUntypedAgentCallRunsGeneralPurpose(t *testing.T) {
	for _, gate := range []struct {
		name string
		env  []string
		fork bool
	}{
		{"off", nil, false},
		{"env on", []string{"CADRE_FORK_SUBAGENT=1"}, true},
	} {
		t.Run(gate.name, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
				body := string(req.Body)
				switch {
				case strings.Contains(body, "started by another agent") || isFork(req):
					return testkit.Reply{Text: "CHILD-DONE"}
				case strings.Contains(body, "CHILD-DONE"):
					return testkit.Reply{Text: "done"}
				case strings.Contains(body, "tool_result"):
					return testkit.Reply{Text: "waiting"}
				}
				return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{"description": "job", "prompt": "do it"}}}}
			})
			e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL).set(gate.env...)
			p := e.run("", "-p", "go", "--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-5-5")
			if p.code != 0 {
				t.Fatalf("exit %d: %s", p.code, p.stderr)
			}
			forked, general := false, false
			for _, r := range srv.Requests() {
				forked = forked || isFork(r)
				general = general || strings.Contains(string(r.Body), `You are the \"general-purpose\" agent`)
			}
			if forked != gate.fork || general == gate.fork {
				t.Errorf("forked %v, general-purpose %v; want fork %v", forked, general, gate.fork)
			}
		})
	}
}
