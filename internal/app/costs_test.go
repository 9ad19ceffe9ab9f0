package app

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// countingStore counts the session records read from the store.
type countingStore struct {
	Store
	reads atomic.Int64
}

func (s *countingStore) GetSession(ctx context.Context, id string) (session.Info, error) {
	s.reads.Add(1)
	return s.Store.GetSession(ctx, id)
}

func (s *countingStore) GetSessions(ctx context.Context, ids []string) (map[string]session.Info, error) {
	s.reads.Add(int64(len(ids)))
	return s.Store.(sessionsGetter).GetSessions(ctx, ids)
}

// A result lists the figures of a run whose end this process wrote from
// the run itself: at 10,000 children each result read the records of the
// runs that ended since the last, a read per turn of the main agent. A run
// whose end was written elsewhere is still read from its record.
func TestSubagentCostsOfRunsEndedHereReadNoRecord(t *testing.T) {
	c, _ := testConfig(t)
	a, err := New(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Settled(t.Context()); err != nil {
		t.Fatal(err)
	}
	db := &countingStore{Store: a.DB}
	a.DB = db

	now := time.Now()
	elsewhere := session.Info{ID: "agent-elsewhere", ParentID: "root", Status: session.StatusCompleted, Model: "m2",
		NumTurns: 3, Usage: llm.Usage{InputTokens: 30, OutputTokens: 3}, Created: now, Updated: now}
	if err := db.Store.CreateSession(t.Context(), elsewhere); err != nil {
		t.Fatal(err)
	}
	group := runs.NewGroup(t.Context())
	end := func(id string, recorded *session.Info) {
		r := runs.New(runs.Info{ID: id, ParentSessionID: "root", AgentType: "worker"}, runs.Options{Background: true, Started: now, Group: group})
		r.SetCancel(func(error) {})
		group.Add(r)
		r.Finish(&runner.Result{Outcome: &loop.Outcome{Result: "done"}}, task.StatusCompleted, nil, now, "done")
		if recorded != nil {
			r.SetRecorded(*recorded)
		}
		r.Retire()
	}
	end("agent-here", &session.Info{Status: session.StatusCompleted, Model: "m1", NumTurns: 2, Usage: llm.Usage{InputTokens: 20, OutputTokens: 2}})
	end("agent-elsewhere", nil)

	var costs Costs
	got, err := a.SubagentCosts(t.Context(), &costs, group, "root", true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		model string
		turns int
		in    int64
	}{"agent-here": {"m1", 2, 20}, "agent-elsewhere": {"m2", 3, 30}}
	if len(got) != len(want) {
		t.Fatalf("SubagentCosts = %+v, want %d runs", got, len(want))
	}
	for _, s := range got {
		w := want[s.AgentID]
		if s.Model != w.model || s.Turns != w.turns || s.Usage.InputTokens != w.in || s.Status != task.StatusCompleted {
			t.Errorf("%s: model %q, %d turns, %d input tokens, %s; want %q, %d, %d, completed", s.AgentID, s.Model, s.Turns, s.Usage.InputTokens, s.Status, w.model, w.turns, w.in)
		}
	}
	if n := db.reads.Load(); n != 1 {
		t.Errorf("%d session records read, want 1 (the run whose end was written elsewhere)", n)
	}
}
