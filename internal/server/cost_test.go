package server

import (
	"encoding/json"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

// A run on a model with no price reports its cost as null, never 0: the
// run's figures, its result's and the session record's, which the web
// view shows as "?".
func TestUnpricedCostIsNullOverHTTP(t *testing.T) {
	f := newFixture(t, func(testkit.Request) testkit.Reply {
		return testkit.Reply{Text: "DONE", Usage: llm.Usage{InputTokens: 1000, OutputTokens: 10}}
	}, Config{})
	r := f.start(map[string]any{"prompt": "hi", "model": "claude-unknown-9", "close": true})
	f.stream(r.ID, nil).until(t, "the end of the run", func(e sse) bool { return e.name == "end" })

	var run map[string]json.RawMessage
	if st := f.do("GET", "/api/runs/"+r.ID, nil, &run); st != 200 {
		t.Fatalf("run: %d", st)
	}
	var result map[string]json.RawMessage
	if err := json.Unmarshal(run["result"], &result); err != nil {
		t.Fatalf("run result %s: %v", run["result"], err)
	}
	var sessions []map[string]json.RawMessage
	f.do("GET", "/api/sessions", nil, &sessions)
	if len(sessions) != 1 {
		t.Fatalf("%d sessions", len(sessions))
	}
	for what, got := range map[string]json.RawMessage{
		"run cost_usd": run["cost_usd"], "result total_cost_usd": result["total_cost_usd"], "session cost_usd": sessions[0]["cost_usd"],
	} {
		if string(got) != "null" {
			t.Errorf("%s = %s, want null", what, got)
		}
	}
}
