package app

import (
	"testing"
	"time"

	"github.com/cadre-dev/cadre/event"
	"github.com/cadre-dev/cadre/internal/builtin"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/record"
	"github.com/google/go-cmp/cmp"
)

// TestEventOfCopiesEveryPayload: the bus carries the SDK's event, so an
// SDK user gets what was published, field for field — and its own copy of
// every payload, so that changing one does not change what the other
// subscribers of the bus see.
func TestEventOfCopiesEveryPayload(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	msg := &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("hi")}}
	for _, tc := range []struct {
		name   string
		in     event.Event
		change func(*event.Event)
	}{
		{"assistant of a subagent",
			event.Event{Type: event.EventAssistant, SessionID: "s", UUID: "u", Time: at, ParentToolUseID: "toolu_1", AgentID: "a1", AgentType: "reviewer", TaskDescription: "review",
				Message: msg, Assistant: &event.AssistantInfo{MessageID: "m1", Model: "x", StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 3}}},
			func(e *event.Event) { e.Assistant.Model = "changed" }},
		{"init",
			event.Event{Type: event.EventSystem, Subtype: event.SubtypeInit, Init: &event.InitInfo{Cwd: "/w", Tools: []string{"Read"}, PermissionMode: event.PermissionPlan, Agents: []string{"r"}, APIKeySource: "none"}},
			func(e *event.Event) { e.Init.Cwd = "changed" }},
		{"task progress",
			event.Event{Type: event.EventSystem, Subtype: event.SubtypeTaskProgress, Task: &event.TaskEvent{TaskID: "a1", ToolUseID: "toolu_1", Description: "d", AgentType: "r",
				LastToolName: "Grep", Usage: &event.TaskUsage{TotalTokens: 10, ToolUses: 2, Duration: 1500 * time.Millisecond}}},
			func(e *event.Event) { e.Task.Usage.TotalTokens, e.Task.Status = 99, record.TaskKilled }},
		{"compaction",
			event.Event{Type: event.EventSystem, Subtype: event.SubtypeCompactBoundary, Message: msg, Compact: &event.CompactInfo{Trigger: "auto", PreTokens: 11}},
			func(e *event.Event) { e.Compact.PreTokens = 0 }},
		{"retry",
			event.Event{Type: event.EventSystem, Subtype: event.SubtypeAPIRetry, Retry: &event.RetryInfo{Attempt: 1, MaxRetries: 4, Delay: time.Second, Status: 529, Kind: "overloaded"}},
			func(e *event.Event) { e.Retry.Attempt = 7 }},
		{"team task",
			event.Event{Type: event.EventSystem, Subtype: event.SubtypeTeamTask, TeamTask: &event.TeamTaskChange{Team: "t", By: "alice", Change: "updated", Task: event.TeamTaskRef{ID: "1", BlockedBy: []string{}}}},
			func(e *event.Event) { e.TeamTask.By = "mallory" }},
		{"result",
			event.Event{Type: event.EventResult, Subtype: event.ResultSuccess, Result: &event.ResultInfo{Result: "ok", NumTurns: 2,
				PermissionDenials: []event.PermissionDenial{{ToolName: "Bash", ToolUseID: "t", ToolInput: map[string]any{"command": "x"}}},
				ModelUsage:        map[string]event.ModelUsage{"m": {Usage: llm.Usage{OutputTokens: 1}, CostUSD: llm.USD(0.5)}}}},
			func(e *event.Event) { e.Result.Result = "changed" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.in
			out := EventOf(tc.in)
			if d := cmp.Diff(tc.in, out); d != "" {
				t.Fatalf("(-published +got):\n%s", d)
			}
			tc.change(&out)
			if d := cmp.Diff(before, tc.in); d != "" {
				t.Errorf("changing the SDK's copy changed the published event (-before +after):\n%s", d)
			}
		})
	}
}

// TestEventOfReadsTheTodoList: a user event whose tool result is a
// TodoWrite's carries the list it left.
func TestEventOfReadsTheTodoList(t *testing.T) {
	meta := builtin.TodoMeta{NewTodos: []builtin.Todo{{Content: "Write it", Status: "in_progress", ActiveForm: "Writing it"}}}
	for _, tc := range []struct {
		name string
		meta any
	}{
		{"one call", meta},
		{"several calls", map[string]any{"toolu_1": meta}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := EventOf(event.Event{Type: event.EventUser, ToolUseResult: tc.meta}).Todos
			want := []event.Todo{{Content: "Write it", Status: "in_progress", ActiveForm: "Writing it"}}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
