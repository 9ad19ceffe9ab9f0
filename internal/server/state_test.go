package server

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// An open run that has answered is idle, not running, and says what its
// main agent did: its turns and tokens, as its own agent row shows them;
// closed, it is completed.
func TestAnOpenRunIsIdleAfterItsAnswer(t *testing.T) {
	f := newFixture(t, readThenAnswer, Config{})
	r := f.start(map[string]any{"prompt": "What does notes.txt say?"})
	s := f.stream(r.ID, nil)
	s.until(t, "the answer", isResult)

	var got runJSON
	f.do("GET", "/api/runs/"+r.ID, nil, &got)
	if got.State != "idle" || !got.Running || got.NumTurns != 2 || got.MainTokens < 126 {
		t.Errorf("the run after its answer: state %q, running %v, %d turns, %d tokens; want idle, open, 2 turns, ≥126 tokens", got.State, got.Running, got.NumTurns, got.MainTokens)
	}
	var agents []agentJSON
	if st := f.do("GET", "/api/runs/"+r.ID+"/agents", nil, &agents); st != 200 || len(agents) != 1 {
		t.Fatalf("agents: %d %+v", st, agents)
	}
	m := agents[0]
	if m.ID != r.ID || m.Agent != "main" || m.State != "idle" || m.NumTurns != 2 || m.Tokens != got.MainTokens ||
		m.Prompt != "What does notes.txt say?" || m.Model == "" || !slices.Contains(m.Tools, "Read") || len(m.Calls) != 1 {
		t.Errorf("the main agent: %+v", m)
	}
	var list []sessionJSON
	f.do("GET", "/api/sessions", nil, &list)
	if len(list) != 1 || list[0].State != "idle" {
		t.Errorf("the sessions list: %+v, want the live run's state idle", list)
	}

	f.do("POST", "/api/runs/"+r.ID+"/close", nil, nil)
	s.until(t, "the end", func(e sse) bool { return e.name == "end" })
	f.do("GET", "/api/runs/"+r.ID, nil, &got)
	if got.State != "completed" || got.Running {
		t.Errorf("the closed run: state %q, running %v; want completed", got.State, got.Running)
	}
}

// While the model answers, the main agent is running; stopped, the run is
// killed, as the session record says.
func TestARunInATurnIsRunningAndStoppedIsKilled(t *testing.T) {
	asked := make(chan struct{})
	var once sync.Once
	f := newFixture(t, func(testkit.Request) testkit.Reply {
		once.Do(func() { close(asked) })
		return testkit.Reply{Stall: testkit.StallNoResponse}
	}, Config{})
	r := f.start(map[string]any{"prompt": "think long"})
	select {
	case <-asked:
	case <-time.After(deadline):
		t.Fatal("the model was never asked")
	}
	var got runJSON
	f.do("GET", "/api/runs/"+r.ID, nil, &got)
	if got.State != "running" {
		t.Errorf("during the turn: state %q, want running", got.State)
	}
	if st := f.do("POST", "/api/runs/"+r.ID+"/stop", nil, &got); st != http.StatusOK || got.State != "killed" {
		t.Errorf("stopped: %d state %q, want killed", st, got.State)
	}
}

// Background subagents waiting for a place in the lane are queued, not
// running, while the main agent, between turns, is idle; their sessions
// are titled with their tasks' descriptions; cost rolls up per subtree.
func TestQueuedSubagentsAreQueued(t *testing.T) {
	f := newFixtureWith(t, twoSlowChildren, Config{}, `{"subagents": {"maxConcurrent": 1}}`)
	r := f.start(map[string]any{"prompt": "start two"})
	s := f.stream(r.ID, nil)
	s.until(t, "the main agent's answer", isResult)

	var agents []agentJSON
	if st := f.do("GET", "/api/runs/"+r.ID+"/agents", nil, &agents); st != 200 || len(agents) != 3 {
		t.Fatalf("agents: %d %+v", st, agents)
	}
	states := map[string]int{}
	for _, a := range agents[1:] {
		states[a.State]++
		if a.ParentID != r.ID || a.Agent != "slow" || !a.Background || !slices.Equal(a.Tools, []string{"Read"}) || !strings.HasPrefix(a.Description, "task ") {
			t.Errorf("subagent %+v", a)
		}
	}
	if agents[0].State != "idle" || states["running"] != 1 || states["queued"] != 1 {
		t.Errorf("states: main %q, children %v; want main idle, one running and one queued", agents[0].State, states)
	}
	if len(agents[0].Children) != 2 {
		t.Errorf("main's children %v", agents[0].Children)
	}
	total := agents[0].CostUSD
	for _, a := range agents[1:] {
		total = total.Add(a.CostUSD)
	}
	if !agents[0].SubtreeCostUSD.Equal(total) {
		t.Errorf("main's subtree cost %v, want its own and its children's, %v", agents[0].SubtreeCostUSD, total)
	}
	var rows []sessionJSON
	f.do("GET", "/api/sessions?order=tree", nil, &rows)
	listed := map[string]int{}
	for _, row := range rows[1:] {
		listed[row.State]++
		if !strings.HasPrefix(row.Title, "task ") {
			t.Errorf("a subagent session is titled %q, want its task's description", row.Title)
		}
	}
	// The sessions list (the home page) says the same as the agents tree.
	if rows[0].State != "idle" || listed["running"] != 1 || listed["queued"] != 1 {
		t.Errorf("sessions list: main %q, children %v; want main idle, one running and one queued", rows[0].State, listed)
	}
	f.do("POST", "/api/runs/"+r.ID+"/subagents/all/stop", nil, nil)
}
