package cadre

import (
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/llm"
	"github.com/google/go-cmp/cmp"
)

// TestEventOfTypesEveryPayload: what the runtime publishes reaches SDK
// users as typed parts, task and compaction payloads included.
func TestEventOfTypesEveryPayload(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	msg := &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("hi")}}
	for _, tc := range []struct {
		name string
		in   event.Event
		want Event
	}{
		{"assistant of a subagent",
			event.Event{Type: event.TypeAssistant, SessionID: "s", UUID: "u", Time: at, ParentToolUseID: "toolu_1", AgentID: "a1", AgentType: "reviewer", TaskDescription: "review",
				Message: msg, Assistant: &event.Assistant{MessageID: "m1", Model: "x", StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 3}}},
			Event{Type: EventAssistant, SessionID: "s", UUID: "u", Time: at, ParentToolUseID: "toolu_1", AgentID: "a1", AgentType: "reviewer", TaskDescription: "review",
				Message: msg, Assistant: &AssistantInfo{MessageID: "m1", Model: "x", StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 3}}}},
		{"init",
			event.Event{Type: event.TypeSystem, Subtype: "init", Init: &event.Init{Cwd: "/w", Tools: []string{"Read"}, PermissionMode: "plan", Agents: []string{"r"}, APIKeySource: "none"}},
			Event{Type: EventSystem, Subtype: SubtypeInit, Init: &InitInfo{Cwd: "/w", Tools: []string{"Read"}, PermissionMode: PermissionPlan, Agents: []string{"r"}, APIKeySource: "none"}}},
		{"task started",
			event.Event{Type: event.TypeSystem, Subtype: event.SubtypeTaskStarted, Task: &event.Task{
				TaskID: "a1", ToolUseID: "toolu_1", Description: "d", SubagentType: "r",
				Backgrounded: true, SpawnDepth: 2, TaskType: "local_agent", Prompt: "p"}},
			Event{Type: EventSystem, Subtype: SubtypeTaskStarted, Task: &TaskEvent{TaskID: "a1", ToolUseID: "toolu_1", Description: "d", AgentType: "r",
				Background: true, SpawnDepth: 2, Kind: TaskLocalAgent, Prompt: "p"}}},
		{"task progress",
			event.Event{Type: event.TypeSystem, Subtype: event.SubtypeTaskProgress, Task: &event.Task{
				TaskID: "a1", ToolUseID: "toolu_1", Description: "d", SubagentType: "r", LastToolName: "Grep",
				Usage: event.TaskUsage{TotalTokens: 10, ToolUses: 2, Duration: 1500 * time.Millisecond}}},
			Event{Type: EventSystem, Subtype: SubtypeTaskProgress, Task: &TaskEvent{TaskID: "a1", ToolUseID: "toolu_1", Description: "d", AgentType: "r",
				LastToolName: "Grep", Usage: &TaskUsage{TotalTokens: 10, ToolUses: 2, Duration: 1500 * time.Millisecond}}}},
		{"task notification",
			event.Event{Type: event.TypeSystem, Subtype: event.SubtypeTaskNotification, Task: &event.Task{
				TaskID: "a1", ToolUseID: "toolu_1", Status: "killed", OutputFile: "/o", Summary: "s",
				Usage: event.TaskUsage{TotalTokens: 10, ToolUses: 2, Duration: 7 * time.Millisecond}}},
			Event{Type: EventSystem, Subtype: SubtypeTaskNotification, Task: &TaskEvent{TaskID: "a1", ToolUseID: "toolu_1", Status: TaskKilled,
				OutputFile: "/o", Summary: "s", Usage: &TaskUsage{TotalTokens: 10, ToolUses: 2, Duration: 7 * time.Millisecond}}}},
		{"compaction",
			event.Event{Type: event.TypeSystem, Subtype: "compact_boundary", Message: msg,
				Fields: map[string]any{"compact_metadata": map[string]any{"trigger": "auto", "pre_tokens": int64(11)}}},
			Event{Type: EventSystem, Subtype: SubtypeCompactBoundary, Message: msg, Compact: &CompactInfo{Trigger: "auto", PreTokens: 11}}},
		{"result",
			event.Event{Type: event.TypeResult, Subtype: "success", Result: &event.Result{Result: "ok", NumTurns: 2,
				PermissionDenials: []event.Denial{{ToolName: "Bash", ToolUseID: "t", ToolInput: map[string]any{"command": "x"}}},
				ModelUsage:        map[string]event.ModelUsage{"m": {Usage: llm.Usage{OutputTokens: 1}, CostUSD: llm.USD(0.5)}}}},
			Event{Type: EventResult, Subtype: ResultSuccess, Result: &ResultInfo{Result: "ok", NumTurns: 2,
				PermissionDenials: []PermissionDenial{{ToolName: "Bash", ToolUseID: "t", ToolInput: map[string]any{"command": "x"}}},
				ModelUsage:        map[string]ModelUsage{"m": {Usage: llm.Usage{OutputTokens: 1}, CostUSD: llm.USD(0.5)}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, eventOf(tc.in)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
