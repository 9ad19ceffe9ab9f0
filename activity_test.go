package cadre_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

func TestActivityFollowsRuns(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	started := func(call, id string, depth int, bg bool) cadre.Event {
		return cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeTaskStarted, Time: at, Task: &cadre.TaskEvent{
			TaskID: id, ToolUseID: call, Description: "Review " + id, AgentType: "reviewer", SpawnDepth: depth, Background: bg, Kind: cadre.TaskLocalAgent,
		}}
	}
	calls := func(parent string, tokens int64, blocks ...llm.Block) cadre.Event {
		return cadre.Event{Type: cadre.EventAssistant, ParentToolUseID: parent, Time: at, Message: &llm.Message{Role: llm.RoleAssistant, Content: blocks}, Assistant: &cadre.AssistantInfo{Usage: llm.Usage{OutputTokens: tokens}}}
	}
	ended := func(call string, status cadre.TaskStatus, after time.Duration) cadre.Event {
		return cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeTaskNotification, Time: at.Add(after), Task: &cadre.TaskEvent{
			ToolUseID: call, Status: status, Summary: "done", Usage: &cadre.TaskUsage{TotalTokens: 500, ToolUses: 3},
		}}
	}
	a := cadre.NewActivity()
	for _, e := range []cadre.Event{
		calls("", 0, llm.ToolUse("c1", "Agent", json.RawMessage(`{}`)), llm.ToolUse("c2", "Agent", json.RawMessage(`{}`))),
		started("c1", "a1", 1, false),
		started("c2", "a2", 1, false),
		calls("c1", 100, llm.ToolUse("r1", "Read", json.RawMessage(`{"file_path":"x.go"}`)), llm.ToolUse("g1", "Agent", json.RawMessage(`{}`))),
		started("g1", "a3", 2, false),
		// c2 moves to the background (Ctrl+B): announced again, backgrounded.
		started("c2", "a2", 1, true),
		// A background shell is a task too, but no subagent.
		{Type: cadre.EventSystem, Subtype: cadre.SubtypeTaskStarted, Task: &cadre.TaskEvent{TaskID: "b1", ToolUseID: "sh1", Kind: cadre.TaskLocalBash}},
	} {
		a.Observe(e)
	}
	c1, _ := a.Run("c1")
	if c1.Tool != "Agent" || c1.ToolUses != 2 || c1.Tokens != 100 || c1.Done() || c1.AgentID != "a1" {
		t.Errorf("c1 = %+v: want running, on its newest call, 100 tokens", c1)
	}
	if kids := a.Children("c1"); len(kids) != 1 || kids[0].ToolUseID != "g1" || kids[0].Depth != 2 {
		t.Errorf("children of c1 = %+v, want the grandchild g1 at depth 2", kids)
	}
	if top := a.Children(""); len(top) != 2 {
		t.Errorf("the main agent's runs = %+v, want c1 and c2 (no shell task)", top)
	}
	if c2, _ := a.Run("c2"); !c2.Background {
		t.Errorf("c2 = %+v: moved to the background", c2)
	}
	if a.Running() != 3 || !a.Foreground() {
		t.Errorf("running %d, foreground %v: want 3 running, c1 and g1 in the foreground", a.Running(), a.Foreground())
	}
	a.Observe(cadre.Event{Type: cadre.EventUser, ParentToolUseID: "c2", Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "x"}}}})
	a.Observe(calls("c2", 1, llm.ToolUse("x", "Glob", json.RawMessage(`{}`))))
	if c2, _ := a.Run("c2"); c2.Tool != "Glob" {
		t.Errorf("c2 = %+v: want on its Glob call", c2)
	}
	a.Observe(cadre.Event{Type: cadre.EventUser, ParentToolUseID: "c2", Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "x"}}}})
	if c2, _ := a.Run("c2"); c2.Tool != "" {
		t.Errorf("c2 = %+v: its call returned, it waits on the model", c2)
	}
	a.Observe(ended("g1", cadre.TaskCompleted, 2*time.Second))
	a.Observe(ended("c1", cadre.TaskFailed, 3*time.Second))
	a.Observe(calls("c1", 999)) // late: a finished run stays finished
	c1, _ = a.Run("c1")
	if !c1.Done() || c1.Status != cadre.TaskFailed || c1.Tokens != 500 || c1.ToolUses != 3 || c1.Tool != "" || c1.Elapsed(at.Add(time.Hour)) != 3*time.Second {
		t.Errorf("c1 = %+v: want failed after 3s with the notification's figures", c1)
	}
	if a.Running() != 1 || a.Foreground() {
		t.Errorf("running %d, foreground %v: want only c2, in the background", a.Running(), a.Foreground())
	}
}

// TestApprovalsServeAConversation: a subagent's call that asks reaches an
// Approvals queue naming the subagent, is answered from it and runs; the
// Activity built from the conversation's events shows the run, ended; the
// conversation's figures count the tree.
func TestApprovalsServeAConversation(t *testing.T) {
	f := newFixture(t)
	var runnerReply func(req *llm.Request) (*llm.Response, error)
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		resp, err := runnerReply(req)
		if resp != nil {
			resp.Usage = llm.Usage{InputTokens: 10, OutputTokens: 5}
		}
		return resp, err
	}
	runnerReply = func(req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if req.Agent == "runner" {
			if len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult {
				return llm.Reply(llm.Text("child saw " + strings.TrimSpace(last.Content[0].ResultText()))), nil
			}
			return llm.Reply(llm.ToolUse("c1", "Bash", json.RawMessage(`{"command":"echo from-child"}`))), nil
		}
		if len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult {
			return llm.Reply(llm.Text("main done")), nil
		}
		return llm.Reply(llm.ToolUse("call-run", "Agent", json.RawMessage(`{"subagent_type":"runner","description":"Run it","prompt":"Run the command."}`))), nil
	}
	rt := f.open(t, cadre.Options{Agents: []cadre.Agent{
		{Name: "runner", Description: "Runs commands.", Prompt: "Run.", Tools: []string{"Bash"}, PermissionMode: cadre.PermissionDefault},
		{Name: "secret", Description: "Hidden.", Prompt: "Hide.", Hidden: true},
	}})
	if got := rt.MentionableAgents(); len(got) == 0 || contains(got, "secret") || !contains(got, "runner") {
		t.Errorf("MentionableAgents() = %q: want runner, not the hidden one", got)
	}
	approvals := cadre.NewApprovals()
	cv := openConvo(t, rt, cadre.OpenRequest{Permission: approvals.Ask})
	cv.send("go")
	p := waitPending(t, approvals, 1)
	if r := p[0].Request; r.Agent != "runner" || r.ParentToolUseID != "call-run" || r.Tool != "Bash" || len(r.Suggestions) == 0 {
		t.Fatalf("request %+v: want the runner's Bash call, with a rule to remember", r)
	}
	// Mid-turn, the figures already count the main agent's reply and the
	// child's (15 tokens each), though neither turn has ended.
	if s := cv.c.Stats(); s.Usage.Total() != 30 {
		t.Errorf("mid-turn stats %+v: want the two replies so far, 30 tokens", s)
	}
	approvals.Answer(p[0].ID, cadre.PermissionDecision{Allow: true})
	if rs := cv.close(); len(rs) != 1 || rs[0].Result != "main done" {
		t.Fatalf("results %+v", rs)
	}
	a := cadre.NewActivity()
	cv.mu.Lock()
	for _, e := range cv.evs {
		a.Observe(e)
	}
	cv.mu.Unlock()
	r, ok := a.Run("call-run")
	if !ok || !r.Done() || r.Status != cadre.TaskCompleted || r.AgentType != "runner" || r.Description != "Run it" || r.ToolUses != 1 {
		t.Errorf("run %+v: want the runner's completed run with its one call", r)
	}
	if s := cv.c.Stats(); s.Usage.Total() == 0 || s.BackgroundTasks != 0 {
		t.Errorf("stats %+v: want the tree's usage, nothing in the background", s)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Each tool call is kept with its time, on the run that made it or as the
// main agent's own: what a timeline marks.
func TestActivityKeepsEveryCallWithItsTime(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	call := func(parent string, at time.Duration, blocks ...llm.Block) cadre.Event {
		return cadre.Event{Type: cadre.EventAssistant, ParentToolUseID: parent, Time: t0.Add(at), Message: &llm.Message{Role: llm.RoleAssistant, Content: blocks}, Assistant: &cadre.AssistantInfo{}}
	}
	a := cadre.NewActivity()
	a.Observe(call("", 0, llm.ToolUse("c1", "Agent", json.RawMessage(`{}`))))
	a.Observe(call("c1", time.Second, llm.ToolUse("r1", "Read", json.RawMessage(`{}`)), llm.ToolUse("g1", "Grep", json.RawMessage(`{}`))))
	a.Observe(call("c1", 3*time.Second, llm.ToolUse("b1", "Bash", json.RawMessage(`{}`))))
	main := a.MainCalls()
	if len(main) != 1 || main[0] != (cadre.ActivityCall{ID: "c1", Name: "Agent", At: t0}) {
		t.Errorf("main calls %+v", main)
	}
	r, _ := a.Run("c1")
	want := []cadre.ActivityCall{{ID: "r1", Name: "Read", At: t0.Add(time.Second)}, {ID: "g1", Name: "Grep", At: t0.Add(time.Second)}, {ID: "b1", Name: "Bash", At: t0.Add(3 * time.Second)}}
	if len(r.Calls) != len(want) {
		t.Fatalf("calls %+v, want %+v", r.Calls, want)
	}
	for i := range want {
		if r.Calls[i] != want[i] {
			t.Errorf("call %d = %+v, want %+v", i, r.Calls[i], want[i])
		}
	}
	// A copy: what Runs returned does not change under later calls.
	runs := a.Runs()
	a.Observe(call("c1", 4*time.Second, llm.ToolUse("e1", "Edit", json.RawMessage(`{}`))))
	if len(runs[0].Calls) != 3 {
		t.Errorf("an earlier copy changed: %+v", runs[0].Calls)
	}
}
