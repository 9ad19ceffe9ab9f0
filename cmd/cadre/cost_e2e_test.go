package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

// unpriced is an Anthropic model id no price table knows.
const unpriced = "claude-unknown-9"

// costPricing prices the two models these tests use at 1 USD per million
// input tokens, so each reply's cost is its input tokens in millions.
const costPricing = `--settings={"pricing": {"claude-sonnet-5-5": {"input": 1, "output": 0}, "claude-unknown-9": {"input": 1, "output": 0}}}`

// keyIsNull reports whether m has key, with the value null.
func keyIsNull(m map[string]any, key string) bool {
	v, ok := m[key]
	return ok && v == nil
}

// TestUnpricedModelCostIsUnknown: a model with no price costs "unknown"
// (null), never $0, in the result line and its modelUsage, in `cadre
// sessions --json` read by a later process, and once priced in settings
// it has a cost.
func TestUnpricedModelCostIsUnknown(t *testing.T) {
	e, _ := anthropicEnv(t, func(testkit.Request) testkit.Reply {
		return testkit.Reply{Text: "DONE", Usage: llm.Usage{InputTokens: 500_000, OutputTokens: 10}}
	})
	p := ok(t, e.run("", "-p", "hi", "--model", unpriced, "--output-format", "stream-json", "--verbose"))
	res := finalResult(t, p.stdout)
	if !keyIsNull(res, "total_cost_usd") {
		t.Errorf("total_cost_usd = %v, want null", res["total_cost_usd"])
	}
	mu, _ := res["modelUsage"].(map[string]any)
	if len(mu) != 1 {
		t.Fatalf("modelUsage %v, want one model", res["modelUsage"])
	}
	for name, u := range mu {
		if !keyIsNull(u.(map[string]any), "costUSD") {
			t.Errorf("modelUsage[%s].costUSD = %v, want null", name, u.(map[string]any)["costUSD"])
		}
	}
	// A later process reads the record: still unknown, not 0.
	list := ok(t, e.run("", "sessions", "--json"))
	var rows []map[string]any
	if err := json.Unmarshal([]byte(list.stdout), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("sessions --json: %v\n%s", err, list.stdout)
	}
	if !keyIsNull(rows[0], "cost_usd") {
		t.Errorf("sessions --json cost = %v, want null", rows[0]["cost_usd"])
	}
	if text := ok(t, e.run("", "sessions", "show", sessionID(t, p))).stdout; !strings.Contains(text, "cost      ?\n") {
		t.Errorf("sessions show does not say the cost is unknown:\n%s", text)
	}

	// Priced by the user, the same model has a cost.
	p = ok(t, e.run("", "-p", "hi", "--model", unpriced, "--output-format", "stream-json", "--verbose", costPricing))
	if cost, ok := finalResult(t, p.stdout)["total_cost_usd"].(float64); !ok || math.Abs(cost-0.5) > 1e-9 {
		t.Errorf("priced total_cost_usd = %v, want 0.5", finalResult(t, p.stdout)["total_cost_usd"])
	}
}

// TestBudgetRefusesAnUnpricedModel: --max-budget-usd cannot be kept on a
// model with no price: the run is refused with one line naming the model
// and how to price it, before any request; priced in settings, it runs.
func TestBudgetRefusesAnUnpricedModel(t *testing.T) {
	e, srv := anthropicEnv(t, func(testkit.Request) testkit.Reply {
		return testkit.Reply{Text: "DONE", Usage: llm.Usage{InputTokens: 1000}}
	})
	failsWith(t, e.run("", "-p", "hi", "--model", unpriced, "--max-budget-usd=1"), unpriced, "pricing", "--max-budget-usd")
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests made by a refused run", n)
	}
	if rows := listSessions(t, e); len(rows) != 0 {
		t.Errorf("a refused run left sessions: %+v", rows)
	}
	// The fallback model too: the turn may move to it.
	failsWith(t, e.run("", "-p", "hi", "--model", sonnet, "--fallback-model", unpriced, "--max-budget-usd=1"), "fallback model", unpriced, "pricing")
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests made by a refused run", n)
	}
	p := ok(t, e.run("", "-p", "hi", "--model", unpriced, "--max-budget-usd=1", "--output-format", "stream-json", "--verbose", costPricing))
	if res := finalResult(t, p.stdout); res["subtype"] != "success" {
		t.Errorf("priced run: %v", res)
	}
}

// TestBudgetRefusesAnUnpricedSubagent: under a budget, a subagent whose
// model has no price does not start; its spawn fails with the same line,
// which the main agent reads.
func TestBudgetRefusesAnUnpricedSubagent(t *testing.T) {
	agents := `--agents={"cheap": {"description": "runs on an unpriced model", "prompt": "You are CHEAP.", "model": "` + unpriced + `"}}`
	var mu sync.Mutex
	e, srv := anthropicEnv(t, func(req testkit.Request) testkit.Reply {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(string(req.Body), "tool_result") {
			return testkit.Reply{Text: "DONE"}
		}
		return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{
			"description": "cheap work", "prompt": "do it", "subagent_type": "cheap"}}}}
	})
	ok(t, e.run("", "-p", "go", "--model", sonnet, "--max-budget-usd=5", agents, `--settings={"pricing": {"claude-sonnet-5-5": {"input": 1, "output": 0}}}`))
	reqs := srv.Requests()
	for _, r := range reqs {
		if strings.Contains(string(r.Body), "You are CHEAP.") {
			t.Errorf("the unpriced subagent ran: %s", r.Body)
		}
	}
	last := string(reqs[len(reqs)-1].Body)
	for _, w := range []string{unpriced, "pricing", "price is unknown"} {
		if !strings.Contains(last, w) {
			t.Errorf("the spawn's error, as the model reads it, lacks %q:\n%s", w, last)
		}
	}
}

// TestResultSubagentsAddUp: the result line lists each subagent run with
// its own usage and cost, which with the main agent's add up to the
// total; `cadre tasks --json` shows the same figures.
func TestResultSubagentsAddUp(t *testing.T) {
	agents := `--agents={"alpha": {"description": "first", "prompt": "You are ALPHA."}, "beta": {"description": "second", "prompt": "You are BETA."}}`
	var (
		mu        sync.Mutex
		mainCalls int
	)
	e, _ := anthropicEnv(t, func(req testkit.Request) testkit.Reply {
		mu.Lock()
		defer mu.Unlock()
		body := string(req.Body)
		switch {
		case strings.Contains(body, "You are ALPHA."):
			return testkit.Reply{Text: "ALPHA-DONE", Usage: llm.Usage{InputTokens: 1_000_000}}
		case strings.Contains(body, "You are BETA."):
			return testkit.Reply{Text: "BETA-DONE", Usage: llm.Usage{InputTokens: 2_000_000}}
		}
		mainCalls++
		if strings.Contains(body, "tool_result") {
			return testkit.Reply{Text: "BOTH DONE", Usage: llm.Usage{InputTokens: 100_000}}
		}
		return testkit.Reply{Usage: llm.Usage{InputTokens: 100_000}, ToolCalls: []testkit.ToolCall{
			{Name: "Agent", Input: map[string]any{"description": "alpha work", "prompt": "go", "subagent_type": "alpha", "run_in_background": true}},
			{Name: "Agent", Input: map[string]any{"description": "beta work", "prompt": "go", "subagent_type": "beta", "run_in_background": true}},
		}}
	})
	p := ok(t, e.run("", "-p", "delegate", "--model", sonnet, "--output-format", "stream-json", "--verbose", agents, costPricing))
	res := finalResult(t, p.stdout)
	subs := resultSubagents(t, p.stdout)
	if len(subs) != 2 {
		t.Fatalf("result subagents = %v, want two\n%s", res["subagents"], p.stdout)
	}
	want := map[string]struct {
		desc  string
		input float64
	}{"alpha": {"alpha work", 1_000_000}, "beta": {"beta work", 2_000_000}}
	costs := map[string]float64{}
	sum := 0.0
	for _, s := range subs {
		s := s.(map[string]any)
		has(t, s, "agent_id", "agent_type", "description", "model", "num_turns", "usage", "cost_usd", "status", "parent")
		w, found := want[s["agent_type"].(string)]
		if !found {
			t.Errorf("unexpected subagent %v", s)
			continue
		}
		usage := s["usage"].(map[string]any)
		cost, _ := s["cost_usd"].(float64)
		if s["description"] != w.desc || s["model"] != "anthropic:"+sonnet || s["num_turns"] != 1.0 || s["status"] != "completed" ||
			usage["input_tokens"] != w.input || s["parent"] != nil || math.Abs(cost-w.input/1e6) > 1e-9 {
			t.Errorf("subagent entry %v; want %s, %s, 1 turn, completed, %v input tokens costing $%v, no parent", s, w.desc, "anthropic:"+sonnet, w.input, w.input/1e6)
		}
		costs[s["agent_id"].(string)] = cost
		sum += cost
	}
	total, _ := res["total_cost_usd"].(float64)
	mu.Lock()
	own := float64(mainCalls) * 0.1
	mu.Unlock()
	if math.Abs(total-own-sum) > 1e-9 {
		t.Errorf("total_cost_usd %v is not the subagents' %v plus the main agent's own %v", total, sum, own)
	}
	list := ok(t, e.run("", "tasks", "--json"))
	var tasks []struct {
		ID       string
		CostUSD  llm.Cost `json:"cost_usd"`
		Model    string
		NumTurns int `json:"num_turns"`
	}
	if err := json.Unmarshal([]byte(list.stdout), &tasks); err != nil || len(tasks) != 2 {
		t.Fatalf("cadre tasks --json: %v\n%s", err, list.stdout)
	}
	for _, tk := range tasks {
		got, known := tk.CostUSD.USD()
		if c, found := costs[tk.ID]; !found || !known || math.Abs(got-c) > 1e-9 || tk.Model != "anthropic:"+sonnet || tk.NumTurns != 1 {
			t.Errorf("cadre tasks --json: task %s costs %v on %q in %d turns; the result said %v on %s in 1", tk.ID, tk.CostUSD, tk.Model, tk.NumTurns, c, "anthropic:"+sonnet)
		}
	}
}

// resultSubagents merges the subagents of every result line of out, as a
// program reads them: each result lists the runs that changed since the
// one before, so the newest entry of each agent_id wins. It fails t if a
// result repeats an entry the one before already listed unchanged.
func resultSubagents(t *testing.T, out string) []any {
	t.Helper()
	var (
		order  []string
		latest = map[string]any{}
		listed = map[string]string{}
	)
	for _, l := range lines(t, out) {
		if l["type"] != "result" {
			continue
		}
		subs, _ := l["subagents"].([]any)
		for _, s := range subs {
			id := fmt.Sprint(s.(map[string]any)["agent_id"])
			b, _ := json.Marshal(s)
			if listed[id] == string(b) {
				t.Errorf("a result lists subagent %s again, unchanged since an earlier result: %s", id, b)
			}
			listed[id] = string(b)
			if _, seen := latest[id]; !seen {
				order = append(order, id)
			}
			latest[id] = s
		}
	}
	var merged []any
	for _, id := range order {
		merged = append(merged, latest[id])
	}
	return merged
}

// TestResultSubagentsNested: a subagent's own subagent is listed too,
// its parent the agent that started it, and the costs still add up.
func TestResultSubagentsNested(t *testing.T) {
	agents := `--agents={"outer": {"description": "delegates", "prompt": "You are OUTER."}, "inner": {"description": "works", "prompt": "You are INNER."}}`
	var (
		mu        sync.Mutex
		mainCalls int
	)
	e, _ := anthropicEnv(t, func(req testkit.Request) testkit.Reply {
		mu.Lock()
		defer mu.Unlock()
		body := string(req.Body)
		done := strings.Contains(body, "tool_result")
		switch {
		case strings.Contains(body, "You are INNER."):
			return testkit.Reply{Text: "INNER-DONE", Usage: llm.Usage{InputTokens: 2_000_000}}
		case strings.Contains(body, "You are OUTER.") && done:
			return testkit.Reply{Text: "OUTER-DONE", Usage: llm.Usage{InputTokens: 1_000_000}}
		case strings.Contains(body, "You are OUTER."):
			return testkit.Reply{Usage: llm.Usage{InputTokens: 1_000_000}, ToolCalls: []testkit.ToolCall{fgAgentCall("inner work", "go", "inner")}}
		}
		mainCalls++
		if done {
			return testkit.Reply{Text: "ALL DONE", Usage: llm.Usage{InputTokens: 100_000}}
		}
		return testkit.Reply{Usage: llm.Usage{InputTokens: 100_000}, ToolCalls: []testkit.ToolCall{fgAgentCall("outer work", "go", "outer")}}
	})
	settings := `--settings={"subagents": {"maxSpawnDepth": 2}, "pricing": {"claude-sonnet-5-5": {"input": 1, "output": 0}}}`
	p := ok(t, e.run("", "-p", "delegate", "--model", sonnet, "--output-format", "stream-json", "--verbose", agents, settings))
	res := finalResult(t, p.stdout)
	subs := resultSubagents(t, p.stdout)
	if len(subs) != 2 {
		t.Fatalf("result subagents = %v, want two\n%s", res["subagents"], p.stdout)
	}
	byType := map[string]map[string]any{}
	sum := 0.0
	for _, s := range subs {
		s := s.(map[string]any)
		byType[fmt.Sprint(s["agent_type"])] = s
		cost, _ := s["cost_usd"].(float64)
		sum += cost
	}
	outer, inner := byType["outer"], byType["inner"]
	if outer == nil || inner == nil {
		t.Fatalf("subagents %v, want outer and inner", subs)
	}
	if outer["parent"] != nil || inner["parent"] != outer["agent_id"] {
		t.Errorf("parents: outer %v, inner %v; want null and %v", outer["parent"], inner["parent"], outer["agent_id"])
	}
	if outer["num_turns"] != 2.0 || outer["cost_usd"] != 2.0 || inner["num_turns"] != 1.0 || inner["cost_usd"] != 2.0 {
		t.Errorf("outer %v, inner %v; want 2 turns costing 2 each", outer, inner)
	}
	total, _ := res["total_cost_usd"].(float64)
	mu.Lock()
	own := float64(mainCalls) * 0.1
	mu.Unlock()
	if math.Abs(total-own-sum) > 1e-9 {
		t.Errorf("total_cost_usd %v is not the subagents' %v plus the main agent's own %v", total, sum, own)
	}
}
