package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit"
)

// twoSlowChildren is a main agent that starts two background "slow"
// subagents, which never answer until stopped; the main agent says what
// it launched and, later, what each notification said.
func twoSlowChildren(req testkit.Request) testkit.Reply {
	body := string(req.Body)
	if strings.Contains(body, "SLOW-CHILD") {
		return testkit.Reply{Stall: testkit.StallNoResponse}
	}
	msgs, _ := req.JSON()["messages"].([]any)
	if len(msgs) == 1 {
		call := func(id, what string) testkit.ToolCall {
			return testkit.ToolCall{ID: id, Name: "Agent", Input: map[string]any{
				"description": what, "prompt": "Do " + what, "subagent_type": "slow", "run_in_background": true,
			}}
		}
		return testkit.Reply{ToolCalls: []testkit.ToolCall{call("toolu_a", "task alpha"), call("toolu_b", "task beta")}}
	}
	return testkit.Reply{Text: "noted"}
}

// The subagents of a run are listed, messaged and stopped through the
// API; their task records are listed, read and stopped too.
func TestSubagentsAndTasksOverHTTP(t *testing.T) {
	f := newFixture(t, twoSlowChildren, Config{})
	r := f.start(map[string]any{"prompt": "start two"})
	s := f.stream(r.ID, nil)
	started := 0
	s.until(t, "two task_started events", func(e sse) bool {
		if e.name == "system" && e.data["subtype"] == "task_started" {
			started++
		}
		return started == 2
	})
	var subs []subagentJSON
	if st := f.do("GET", "/api/runs/"+r.ID+"/subagents", nil, &subs); st != 200 || len(subs) != 2 {
		t.Fatalf("subagents: %d %+v", st, subs)
	}
	for i, sa := range subs {
		if sa.Index != i+1 || !sa.Running || sa.Agent != "slow" || sa.Depth != 1 || !sa.Background || sa.ParentSessionID != r.ID {
			t.Errorf("subagent %d: %+v", i, sa)
		}
	}
	var act activityBody
	f.do("GET", "/api/runs/"+r.ID+"/activity", nil, &act)
	acts := act.Runs
	if len(act.Main.Calls) != 2 || act.Main.Calls[0].Name != "Agent" || act.Main.SessionID != r.ID {
		t.Errorf("the main agent's calls %+v, want its two Agent calls", act.Main)
	}
	// They start in parallel: either may come first.
	if len(acts) != 2 || acts[0].ToolUseID+acts[1].ToolUseID != "toolu_atoolu_b" && acts[0].ToolUseID+acts[1].ToolUseID != "toolu_btoolu_a" || acts[0].AgentType != "slow" {
		t.Errorf("activity %+v", acts)
	}

	// Listed as a tree: the main session, then its subagents' under it.
	var rows []sessionJSON
	f.do("GET", "/api/sessions?order=tree", nil, &rows)
	if len(rows) != 3 || rows[0].ID != r.ID || rows[0].Depth != 0 || rows[0].RootID != r.ID || !rows[0].Live {
		t.Fatalf("sessions as a tree: %+v", rows)
	}
	for _, c := range rows[1:] {
		if c.Depth != 1 || c.RootID != r.ID || c.ParentID != r.ID || c.Agent != "slow" {
			t.Errorf("child row %+v", c)
		}
	}

	var reply map[string]string
	if st := f.do("POST", "/api/runs/"+r.ID+"/subagents/%231/messages", map[string]any{"text": "hurry up"}, &reply); st != http.StatusAccepted || reply["reply"] == "" {
		t.Errorf("message to #1: %d %v", st, reply)
	}

	var tasks []cadre.Task
	f.do("GET", "/api/tasks?session="+r.ID, nil, &tasks)
	if len(tasks) != 2 {
		t.Fatalf("tasks %+v", tasks)
	}
	var one cadre.Task
	if st := f.do("GET", "/api/tasks/"+subs[0].ID, nil, &one); st != 200 || one.ID != subs[0].ID || one.Status != cadre.TaskRunning {
		t.Errorf("task: %d %+v", st, one)
	}
	resp, err := f.http.Client().Get(f.http.URL + "/api/tasks/" + subs[0].ID + "/output?token=" + f.token)
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("task output: %v %v", resp, err)
	}
	resp.Body.Close()

	var stopped map[string]any
	if st := f.do("POST", "/api/runs/"+r.ID+"/subagents/%232/stop", nil, &stopped); st != 200 || fmt.Sprint(stopped["stopped"]) != fmt.Sprint([]any{subs[1].ID}) {
		t.Errorf("stop #2: %d %v", st, stopped)
	}
	if st := f.do("POST", "/api/tasks/"+subs[0].ID+"/stop", nil, &stopped); st != 200 {
		t.Errorf("stop task %s: %d %v", subs[0].ID, st, stopped)
	}
	for _, id := range []string{subs[0].ID, subs[1].ID} {
		f.do("GET", "/api/tasks/"+id, nil, &one)
		if one.Status != cadre.TaskKilled {
			t.Errorf("task %s is %s after its stop, want killed", id, one.Status)
		}
	}
	var body errorBody
	if st := f.do("POST", "/api/tasks/"+subs[0].ID+"/stop", nil, &body); st != http.StatusConflict {
		t.Errorf("stopping a stopped task: %d %q, want 409", st, body.Error)
	}
}

// Shutdown stops a run in the middle of a turn as /stop does: the
// stream ends, and the session is recorded as killed.
func TestShutdownStopsRunsAndRecordsThem(t *testing.T) {
	f := newFixture(t, func(testkit.Request) testkit.Reply { return testkit.Reply{Stall: testkit.StallNoResponse} }, Config{})
	r := f.start(map[string]any{"prompt": "take your time"})
	s := f.stream(r.ID, nil)
	s.until(t, "the init event", func(e sse) bool { return e.name == "system" })
	if err := f.srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	evs := s.until(t, "the end", func(e sse) bool { return e.name == "end" })
	var last sse
	for _, e := range evs {
		if e.name == "result" {
			last = e
		}
	}
	if last.data["is_error"] != true {
		t.Errorf("the last result %v, want an error result (stopped)", last.data)
	}
	ss, _, err := f.srv.rt.Session(t.Context(), r.ID)
	if err != nil || ss.Status != cadre.SessionKilled {
		t.Errorf("session after shutdown: %+v %v, want killed", ss, err)
	}
	var body errorBody
	if st := f.do("POST", "/api/runs", map[string]any{"prompt": "more"}, &body); st != http.StatusServiceUnavailable {
		t.Errorf("start after shutdown: %d %q, want 503", st, body.Error)
	}
}
