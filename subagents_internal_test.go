package cadre

import (
	"context"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

// TestSubagentsSkipsThisProcessLaunchingRuns: a run of this process is
// recorded in the store (its session and task, then task_started) a moment
// before its group lists it. Read in that moment, the store's record looked
// like an earlier process's run and was numbered first, so #1 and #2 swapped
// once the group caught up (seen as TestSubagentsAndTasksOverHTTP stopping
// the wrong run). A running session this process owns is its own launch in
// progress, never an earlier process's; an earlier process's is listed.
func TestSubagentsSkipsThisProcessLaunchingRuns(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	rt, err := New(context.Background(), Options{
		Cwd: dir,
		LLM: &llm.ModelFunc{ID: "test:model", Func: func(context.Context, *llm.Request) (*llm.Response, error) {
			return llm.Reply(llm.Text("hi")), nil
		}},
		Getenv: testkit.Home(home),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	c, err := rt.Open(t.Context(), OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	parent := c.SessionID()
	now := time.Now()
	for _, s := range []session.Info{
		{ID: "01a21d00-0000-7000-8000-000000000001", ParentID: parent, Agent: "worker", Title: "launching here", Cwd: dir,
			Status: session.StatusRunning, Created: now, Updated: now, Owner: rt.app.Owner.ID()},
		{ID: "01a21d00-0000-7000-8000-000000000002", ParentID: parent, Agent: "worker", Title: "an earlier process's", Cwd: dir,
			Status: session.StatusCompleted, Created: now.Add(-time.Minute), Updated: now, Owner: "1-00000000deadbeef"},
	} {
		if err := rt.app.DB.CreateSession(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := c.Subagents(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != "01a21d00-0000-7000-8000-000000000002" || runs[0].Index != 1 {
		t.Fatalf("Subagents = %+v, want only the earlier process's run, as #1", runs)
	}
}
