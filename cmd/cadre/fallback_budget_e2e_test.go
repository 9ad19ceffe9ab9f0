package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

// requestModel is the model a recorded Anthropic request named.
func requestModel(r testkit.Request) string { return fmt.Sprint(r.JSON()["model"]) }

// TestSDKFlagFallbackModel: when the main model stays overloaded (529) or
// unavailable (503) through the provider's retries, the turn's calls —
// the failed one and every later one — go to --fallback-model, and the
// run succeeds on it.
func TestSDKFlagFallbackModel(t *testing.T) {
	for _, status := range []int{529, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			script := func(req testkit.Request) testkit.Reply {
				if requestModel(req) == "claude-sonnet-5-5" {
					// retry-after-ms keeps the provider's retries quick.
					return testkit.Reply{Status: status, Header: map[string]string{"retry-after-ms": "1"}}
				}
				if !strings.Contains(string(req.Body), "tool_result") {
					return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Read", Input: map[string]any{"file_path": "notes.txt"}}}}
				}
				return testkit.Reply{Text: "ANSWERED"}
			}
			e, srv := anthropicEnv(t, script)
			p := ok(t, e.run("", "-p", "read the notes", "--output-format=stream-json", "--verbose",
				"--model=claude-sonnet-5-5", "--fallback-model=claude-haiku-4-5"))
			if res := finalResult(t, p.stdout); res["subtype"] != "success" || res["result"] != "ANSWERED" {
				t.Fatalf("result %v\nstderr: %s", res, p.stderr)
			}
			var models []string
			for _, r := range srv.Requests() {
				models = append(models, requestModel(r))
			}
			first := strings.Index(strings.Join(models, ","), "claude-haiku-4-5")
			if first < 0 || strings.Count(strings.Join(models, ","), "claude-haiku-4-5") != 2 {
				t.Fatalf("requests went to %v, want the fallback's two calls after the main model's failures", models)
			}
			if tail := strings.Join(models, ",")[first:]; strings.Contains(tail, "sonnet") {
				t.Errorf("the main model was called again after the switch: %v", models)
			}
			if models[0] != "claude-sonnet-5-5" {
				t.Errorf("the first call went to %s, want the main model", models[0])
			}
			if strings.Contains(p.stderr, "not supported yet") {
				t.Errorf("--fallback-model still warns: %s", p.stderr)
			}
		})
	}
}

// TestSDKFlagFallbackModelIsNotMain: a fallback equal to the main model is
// refused at start, as Claude Code refuses it.
func TestSDKFlagFallbackModelIsNotMain(t *testing.T) {
	e, srv := anthropicEnv(t, answerOnly)
	failsWith(t, e.run("", "-p", "hi", "--model=claude-haiku-4-5", "--fallback-model=claude-haiku-4-5"), "fallback")
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests made", n)
	}
}

// budgetSettings prices claude-sonnet-5-5 at 1 USD per million input
// tokens: a reply whose usage is a million input tokens costs 1 USD.
const budgetSettings = `--settings={"pricing": {"claude-sonnet-5-5": {"input": 1, "output": 0}}}`

var million = llm.Usage{InputTokens: 1_000_000}

// TestSDKFlagMaxBudgetUSD: the run stops once its cost reaches
// --max-budget-usd, with a result of subtype error_max_budget_usd carrying
// the usual fields; a subagent's cost counts.
func TestSDKFlagMaxBudgetUSD(t *testing.T) {
	agents := `--agents={"spender": {"description": "spends", "prompt": "You are the SPENDER."}}`
	for _, tc := range []struct {
		name   string
		script func(testkit.Request) testkit.Reply
		want   int // model calls made
	}{
		{
			// Each call costs 1 USD and asks for another tool call: the
			// second reaches 1.5.
			name: "the main agent's calls",
			script: func(testkit.Request) testkit.Reply {
				return testkit.Reply{Usage: million, ToolCalls: []testkit.ToolCall{{Name: "Read", Input: map[string]any{"file_path": "notes.txt"}}}}
			},
			want: 2,
		},
		{
			// The main agent's call costs nothing; the subagent's costs 2
			// USD, so the main agent makes no call after it.
			name: "a subagent's calls",
			script: func(req testkit.Request) testkit.Reply {
				if strings.Contains(string(req.Body), "SPENDER") {
					return testkit.Reply{Usage: llm.Usage{InputTokens: 2_000_000}, Text: "spent"}
				}
				return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{
					"description": "spend", "prompt": "spend it", "subagent_type": "spender"}}}}
			},
			want: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			script := func(r testkit.Request) testkit.Reply { mu.Lock(); defer mu.Unlock(); return tc.script(r) }
			e, srv := anthropicEnv(t, script)
			p := e.run("", "-p", "spend", "--output-format=stream-json", "--verbose", "--model=claude-sonnet-5-5",
				budgetSettings, agents, "--max-budget-usd=1.5", "--max-turns=5")
			if p.code == 0 {
				t.Errorf("exit 0 for a run stopped by its budget")
			}
			res := finalResult(t, p.stdout)
			if res["subtype"] != "error_max_budget_usd" || res["is_error"] != true {
				t.Fatalf("result %v\nstderr: %s", res, p.stderr)
			}
			if cost, _ := res["total_cost_usd"].(float64); cost < 1.5 {
				t.Errorf("total_cost_usd %v, want at least the budget", res["total_cost_usd"])
			}
			for _, k := range []string{"session_id", "usage", "modelUsage", "num_turns", "duration_ms", "uuid", "errors"} {
				if _, ok := res[k]; !ok {
					t.Errorf("result has no %s: %v", k, res)
				}
			}
			if n := len(srv.Requests()); n != tc.want {
				t.Errorf("%d model calls, want %d", n, tc.want)
			}
			if strings.Contains(p.stderr, "not supported yet") {
				t.Errorf("--max-budget-usd still warns: %s", p.stderr)
			}
		})
	}
	t.Run("under budget", func(t *testing.T) {
		e, _ := anthropicEnv(t, func(testkit.Request) testkit.Reply { return testkit.Reply{Usage: million, Text: "DONE"} })
		p := ok(t, e.run("", "-p", "spend", "--output-format=stream-json", "--verbose", "--model=claude-sonnet-5-5",
			budgetSettings, "--max-budget-usd=5"))
		if res := finalResult(t, p.stdout); res["subtype"] != "success" {
			t.Errorf("result %v", res)
		}
	})
}
