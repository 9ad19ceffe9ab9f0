package runner_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/llm"
)

// Totals.Live counts a turn as it goes, reply by reply; Snapshot and Cost
// (results, budgets) count it once it has ended, and then both agree.
func TestTotalsLiveFollowsARunningTurn(t *testing.T) {
	var totals runner.Totals
	cost := func(u llm.Usage) llm.Cost { return llm.USD(float64(u.Total()) / 100) }
	replied := make(chan struct{})
	release := make(chan struct{})
	calls := 0
	m := &llm.ModelFunc{ID: "a", Func: func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
		calls++
		if calls == 1 {
			r := llm.Reply(llm.ToolUse("t1", "echo", json.RawMessage(`{"text":"x"}`)))
			r.Usage = llm.Usage{InputTokens: 10, OutputTokens: 1}
			return r, nil
		}
		close(replied) // the first reply has been recorded by now
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		r := llm.Reply(llm.Text("done"))
		r.Usage = llm.Usage{InputTokens: 20, OutputTokens: 2}
		return r, nil
	}}
	_, sess := newSession(t)
	spec := runner.Spec{Session: sess, Totals: &totals, Cost: cost, Loop: loop.Config{Model: m, Tools: echoTools(t)}}
	done := make(chan *runner.Result, 1)
	go func() { done <- runner.Run(t.Context(), spec, nil, llm.UserText("go")) }()
	<-replied
	if u, c := totals.Live(); u.Total() != 11 || c != llm.USD(0.11) {
		t.Errorf("mid-turn Live = %d tokens, $%v; want the first reply's 11, $0.11", u.Total(), c)
	}
	if u, c, _ := totals.Snapshot(); u.Total() != 0 || c != (llm.Cost{}) {
		t.Errorf("mid-turn Snapshot = %d tokens, $%v; want nothing until the turn ends", u.Total(), c)
	}
	close(release)
	if res := <-done; res.Err != nil {
		t.Fatal(res.Err)
	}
	lu, lc := totals.Live()
	su, sc, _ := totals.Snapshot()
	if lu != su || lc != sc || su.Total() != 33 {
		t.Errorf("after the turn Live = %+v $%v, Snapshot = %+v $%v; want both the turn's 33 tokens", lu, lc, su, sc)
	}
}
