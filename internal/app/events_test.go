package app

import (
	"testing"
	"time"

	"github.com/cadre-dev/cadre/event"
	bus "github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/record"
	"github.com/google/go-cmp/cmp"
)

// TestEventOfTypesEveryPayload: what the runtime publishes reaches SDK
// users as typed parts, task and compaction payloads included.
func TestEventOfTypesEveryPayload(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	msg := &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("hi")}}
	for _, tc := range []struct {
		name string
		in   bus.Event
		want event.Event
	}{
		{"assistant of a subagent",
			bus.Event{Type: bus.TypeAssistant, SessionID: "s", UUID: "u", Time: at, ParentToolUseID: "toolu_1", AgentID: "a1", AgentType: "reviewer", TaskDescription: "review",
				Message: msg, Assistant: &bus.Assistant{MessageID: "m1", Model: "x", StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 3}}},
			event.Event{Type: event.EventAssistant, SessionID: "s", UUID: "u", Time: at, ParentToolUseID: "toolu_1", AgentID: "a1", AgentType: "reviewer", TaskDescription: "review",
				Message: msg, Assistant: &event.AssistantInfo{MessageID: "m1", Model: "x", StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 3}}}},
		{"init",
			bus.Event{Type: bus.TypeSystem, Subtype: "init", Init: &bus.Init{Cwd: "/w", Tools: []string{"Read"}, PermissionMode: "plan", Agents: []string{"r"}, APIKeySource: "none"}},
			event.Event{Type: event.EventSystem, Subtype: event.SubtypeInit, Init: &event.InitInfo{Cwd: "/w", Tools: []string{"Read"}, PermissionMode: event.PermissionPlan, Agents: []string{"r"}, APIKeySource: "none"}}},
		{"task started",
			bus.Event{Type: bus.TypeSystem, Subtype: bus.SubtypeTaskStarted, Task: &bus.Task{
				TaskID: "a1", ToolUseID: "toolu_1", Description: "d", SubagentType: "r",
				Backgrounded: true, SpawnDepth: 2, TaskType: "local_agent", Prompt: "p"}},
			event.Event{Type: event.EventSystem, Subtype: event.SubtypeTaskStarted, Task: &event.TaskEvent{TaskID: "a1", ToolUseID: "toolu_1", Description: "d", AgentType: "r",
				Background: true, SpawnDepth: 2, Kind: record.TaskLocalAgent, Prompt: "p"}}},
		{"task progress",
			bus.Event{Type: bus.TypeSystem, Subtype: bus.SubtypeTaskProgress, Task: &bus.Task{
				TaskID: "a1", ToolUseID: "toolu_1", Description: "d", SubagentType: "r", LastToolName: "Grep",
				Usage: bus.TaskUsage{TotalTokens: 10, ToolUses: 2, Duration: 1500 * time.Millisecond}}},
			event.Event{Type: event.EventSystem, Subtype: event.SubtypeTaskProgress, Task: &event.TaskEvent{TaskID: "a1", ToolUseID: "toolu_1", Description: "d", AgentType: "r",
				LastToolName: "Grep", Usage: &event.TaskUsage{TotalTokens: 10, ToolUses: 2, Duration: 1500 * time.Millisecond}}}},
		{"task notification",
			bus.Event{Type: bus.TypeSystem, Subtype: bus.SubtypeTaskNotification, Task: &bus.Task{
				TaskID: "a1", ToolUseID: "toolu_1", Status: "killed", OutputFile: "/o", Summary: "s",
				Usage: bus.TaskUsage{TotalTokens: 10, ToolUses: 2, Duration: 7 * time.Millisecond}}},
			event.Event{Type: event.EventSystem, Subtype: event.SubtypeTaskNotification, Task: &event.TaskEvent{TaskID: "a1", ToolUseID: "toolu_1", Status: record.TaskKilled,
				OutputFile: "/o", Summary: "s", Usage: &event.TaskUsage{TotalTokens: 10, ToolUses: 2, Duration: 7 * time.Millisecond}}}},
		{"compaction",
			bus.Event{Type: bus.TypeSystem, Subtype: "compact_boundary", Message: msg,
				Fields: map[string]any{"compact_metadata": map[string]any{"trigger": "auto", "pre_tokens": int64(11)}}},
			event.Event{Type: event.EventSystem, Subtype: event.SubtypeCompactBoundary, Message: msg, Compact: &event.CompactInfo{Trigger: "auto", PreTokens: 11}}},
		{"result",
			bus.Event{Type: bus.TypeResult, Subtype: "success", Result: &bus.Result{Result: "ok", NumTurns: 2,
				PermissionDenials: []bus.Denial{{ToolName: "Bash", ToolUseID: "t", ToolInput: map[string]any{"command": "x"}}},
				ModelUsage:        map[string]bus.ModelUsage{"m": {Usage: llm.Usage{OutputTokens: 1}, CostUSD: llm.USD(0.5)}}}},
			event.Event{Type: event.EventResult, Subtype: event.ResultSuccess, Result: &event.ResultInfo{Result: "ok", NumTurns: 2,
				PermissionDenials: []event.PermissionDenial{{ToolName: "Bash", ToolUseID: "t", ToolInput: map[string]any{"command": "x"}}},
				ModelUsage:        map[string]event.ModelUsage{"m": {Usage: llm.Usage{OutputTokens: 1}, CostUSD: llm.USD(0.5)}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, EventOf(tc.in)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
