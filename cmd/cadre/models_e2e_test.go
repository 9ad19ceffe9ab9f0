package main

import (
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

// TestModelAliasesAreCurrent: --model sonnet reaches the current Sonnet
// (the catalogue's, which names the SDK's newest), and its run costs what
// the catalogue's price says, not 0.
func TestModelAliasesAreCurrent(t *testing.T) {
	for alias, id := range map[string]string{"sonnet": "claude-sonnet-5-5", "opus": "claude-opus-5-5", "haiku": "claude-haiku-5-5", "fable": "claude-fable-5-2"} {
		t.Run(alias, func(t *testing.T) {
			e, srv := anthropicEnv(t, func(testkit.Request) testkit.Reply {
				return testkit.Reply{Text: "DONE", Usage: llm.Usage{InputTokens: 1000, OutputTokens: 100}}
			})
			p := ok(t, e.run("", "-p", "hi", "--model", alias, "--output-format=stream-json", "--verbose"))
			reqs := srv.Requests()
			if len(reqs) != 1 || requestModel(reqs[0]) != id {
				t.Fatalf("requests %v, want one to %s", reqs, id)
			}
			res := finalResult(t, p.stdout)
			if cost, _ := res["total_cost_usd"].(float64); cost <= 0 {
				t.Errorf("total_cost_usd = %v, want the catalogue's price of %s", res["total_cost_usd"], id)
			}
			if strings.Contains(p.stderr, "deprecated") || strings.Contains(p.stderr, "retire") {
				t.Errorf("a current model warns: %s", p.stderr)
			}
		})
	}
}

// TestModelDeprecatedWarns: a deprecated model runs, with one warning that
// names its retirement date and its replacement; from that date on it is
// refused, naming the replacement, and no request leaves.
func TestModelDeprecatedWarns(t *testing.T) {
	e, srv := anthropicEnv(t, answerOnly)
	p := e.run("", "-p", "hi", "--model", "claude-sonnet-4-5")
	if time.Now().UTC().Format(time.DateOnly) >= "2026-11-30" {
		failsWith(t, p, "claude-sonnet-4-5 was retired on 2026-11-30", "use claude-sonnet-5-5 instead (--model sonnet)")
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%d requests to a retired model", n)
		}
		return
	}
	ok(t, p)
	if n := strings.Count(p.stderr, "deprecated"); n != 1 ||
		!strings.Contains(p.stderr, "claude-sonnet-4-5 is deprecated and retires on 2026-11-30; use claude-sonnet-5-5 instead (--model sonnet)") {
		t.Errorf("stderr %q, want one warning with the date and the replacement", p.stderr)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || requestModel(reqs[0]) != "claude-sonnet-4-5" {
		t.Errorf("requests %v, want the deprecated model still called", reqs)
	}
}

// TestModelRetiredIsRefused: a retired model is refused before any request,
// with the replacement named; the same for a subagent whose definition
// names one (its spawn fails, and the model is told why).
func TestModelRetiredIsRefused(t *testing.T) {
	e, srv := anthropicEnv(t, answerOnly)
	failsWith(t, e.run("", "-p", "hi", "--model", "claude-opus-4-1"), "claude-opus-4-1 is retired", "use claude-opus-5-5 instead (--model opus)")
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests to a retired model", n)
	}

	script := func(req testkit.Request) testkit.Reply {
		if !strings.Contains(string(req.Body), "tool_result") {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{
				"subagent_type": "old", "description": "old model", "prompt": "work"}}}}
		}
		return testkit.Reply{Text: "MAIN DONE"}
	}
	e, srv = anthropicEnv(t, script)
	agents := `--agents={"old": {"description": "on a retired model", "prompt": "You are OLD.", "model": "claude-opus-4-1"}}`
	ok(t, e.run("", "-p", "delegate", "--model", "sonnet", agents))
	var told bool
	for _, r := range srv.Requests() {
		if requestModel(r) == "claude-opus-4-1" {
			t.Fatalf("a request went to the retired model")
		}
		told = told || strings.Contains(string(r.Body), "claude-opus-4-1 is retired")
	}
	if !told {
		t.Errorf("the main agent was not told why its subagent could not start")
	}
}
