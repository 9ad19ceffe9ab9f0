package app

import (
	"time"

	"github.com/cadre-dev/cadre/event"
	"github.com/cadre-dev/cadre/internal/builtin"
	bus "github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/record"
)

// EventOf turns a bus event into the SDK's: the payloads the bus carries
// in the SDK's own types are copied by value; the task and team-task
// payloads, in the bus's Claude Code shape, and the payloads kept as
// fields, are typed here.
func EventOf(e bus.Event) event.Event {
	out := event.Event{
		Type: e.Type, Subtype: e.Subtype, SessionID: e.SessionID, UUID: e.UUID, Time: e.Time,
		ParentToolUseID: e.ParentToolUseID, AgentID: e.AgentID, AgentType: e.AgentType, TaskDescription: e.TaskDescription,
		AgentColor: e.AgentColor, Message: e.Message, ToolUseResult: e.ToolUseResult, Partial: e.Partial,
		Todos: todosOf(e.ToolUseResult), Refused: e.Refused,
		Assistant: clone(e.Assistant), Init: clone(e.Init), Result: clone(e.Result),
	}
	if t := e.Task; t != nil {
		out.Task = taskEventOf(e.Subtype, t)
	}
	if e.Subtype == event.SubtypeCompactBoundary {
		out.Compact = compactOf(e.Fields)
	}
	if e.Subtype == event.SubtypeAPIRetry {
		out.Retry = retryOf(e.Fields)
	}
	if t := e.TeamTask; t != nil {
		blocked := t.BlockedBy
		if blocked == nil {
			blocked = []string{}
		}
		out.TeamTask = &event.TeamTaskChange{
			Team: t.Team, By: t.By, Change: t.Change, Fields: t.Fields, From: t.From, To: t.To, Unblocked: t.Unblocked,
			Task: event.TeamTaskRef{ID: t.ID, Subject: t.Subject, Status: t.Status, Owner: t.Owner, BlockedBy: blocked},
		}
	}
	return out
}

// clone copies a payload, so that an SDK user who changes an event's
// payload does not change what other subscribers of the bus see.
func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

func taskEventOf(subtype string, t *bus.Task) *event.TaskEvent {
	out := &event.TaskEvent{
		TaskID: t.TaskID, ToolUseID: t.ToolUseID, Description: t.Description, AgentType: t.SubagentType,
		Prompt: t.Prompt, Background: t.Backgrounded, SpawnDepth: t.SpawnDepth, Kind: record.TaskKind(t.TaskType),
		Status: record.TaskStatus(t.Status), Summary: t.Summary, SummaryIsReport: t.SummaryIsReport, OutputFile: t.OutputFile, LastToolName: t.LastToolName,
	}
	if subtype != event.SubtypeTaskStarted {
		out.Usage = &event.TaskUsage{TotalTokens: t.Usage.TotalTokens, ToolUses: t.Usage.ToolUses, Duration: t.Usage.Duration}
	}
	return out
}

// compactOf reads the compaction payload the runner publishes.
func compactOf(f map[string]any) *event.CompactInfo {
	m, _ := f["compact_metadata"].(map[string]any)
	trigger, _ := m["trigger"].(string)
	return &event.CompactInfo{Trigger: trigger, PreTokens: number(m["pre_tokens"])}
}

func retryOf(f map[string]any) *event.RetryInfo {
	kind, _ := f["error"].(string)
	msg, _ := f["message"].(string)
	return &event.RetryInfo{
		Attempt: int(number(f["attempt"])), MaxRetries: int(number(f["max_retries"])),
		Delay: time.Duration(number(f["retry_delay_ms"])) * time.Millisecond, Status: int(number(f["error_status"])),
		Kind: kind, Message: msg,
	}
}

func number(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}

// todosOf finds the list a TodoWrite call left in a tool result's detail:
// the one call's, or the last of several in one message.
func todosOf(meta any) []event.Todo {
	var found *builtin.TodoMeta
	switch m := meta.(type) {
	case builtin.TodoMeta:
		found = &m
	case map[string]any:
		for _, v := range m {
			if t, ok := v.(builtin.TodoMeta); ok {
				found = &t
			}
		}
	}
	if found == nil {
		return nil
	}
	out := make([]event.Todo, len(found.NewTodos))
	for i, t := range found.NewTodos {
		out[i] = event.Todo{Content: t.Content, Status: t.Status, ActiveForm: t.ActiveForm}
	}
	return out
}
