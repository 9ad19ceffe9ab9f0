package cadre

import (
	"time"

	"github.com/cadre-dev/cadre/event"
	"github.com/cadre-dev/cadre/internal/builtin"
	bus "github.com/cadre-dev/cadre/internal/event"
)

// The stream's vocabulary lives in the public event package, which the
// runtime's event bus shares (docs/sdk.md, "Vocabulary packages"); these
// aliases are the same types under the SDK's names.
type (
	// Event is one message of a session's stream: system (init, the
	// task_* events of background subagents, compaction), an assistant or
	// user message (a subagent's too, tagged with ParentToolUseID), or
	// the result. Type and Subtype say which; the matching field holds
	// the payload.
	Event = event.Event
	// EventType is the kind of an Event, as stream-json's "type" names it.
	EventType = event.EventType
	// TeamTaskChange is what a TaskCreate or TaskUpdate did to a team's
	// task list.
	TeamTaskChange = event.TeamTaskChange
	// TeamTaskRef is a task of a team's list as a change names it.
	TeamTaskRef = event.TeamTaskRef
	// RetryInfo is a model call about to be retried.
	RetryInfo = event.RetryInfo
	// InitInfo is the first event of a run: what the main agent works with.
	InitInfo = event.InitInfo
	// MCPServerStatus is an MCP server's name and status on the init event.
	MCPServerStatus = event.MCPServerStatus
	// AssistantInfo is the metadata of a model reply.
	AssistantInfo = event.AssistantInfo
	// TaskEvent is the payload of the task_* events of a background run.
	TaskEvent = event.TaskEvent
	// TaskUsage is what a background run has used so far.
	TaskUsage = event.TaskUsage
	// CompactInfo describes a compaction.
	CompactInfo = event.CompactInfo
	// ResultInfo is the outcome of a run (the last event).
	ResultInfo = event.ResultInfo
	// PermissionDenial is a tool call the permission layer refused.
	PermissionDenial = event.PermissionDenial
	// ModelUsage is one model's share of a run.
	ModelUsage = event.ModelUsage
	// Refusal is a call refused before anyone was asked.
	Refusal = event.Refusal
	// Todo is one item of an agent's to-do list (the TodoWrite tool).
	Todo = event.Todo
	// SubagentCost is one subagent run's share of what a conversation
	// spent: what a result's Subagents lists.
	SubagentCost = event.SubagentCost
	// PermissionMode says what a session may do without asking.
	PermissionMode = event.PermissionMode
)

// Event types.
const (
	EventSystem      = event.EventSystem
	EventAssistant   = event.EventAssistant
	EventUser        = event.EventUser
	EventResult      = event.EventResult
	EventStreamEvent = event.EventStreamEvent
)

// Subtypes of system events.
const (
	SubtypeInit             = event.SubtypeInit
	SubtypeTaskStarted      = event.SubtypeTaskStarted
	SubtypeTaskProgress     = event.SubtypeTaskProgress
	SubtypeTaskNotification = event.SubtypeTaskNotification
	SubtypeCompactBoundary  = event.SubtypeCompactBoundary
	SubtypeAPIRetry         = event.SubtypeAPIRetry
	SubtypeTeamTask         = event.SubtypeTeamTask
)

// Subtypes of result events, as Claude Code names them.
const (
	ResultSuccess         = event.ResultSuccess
	ResultMaxTurns        = event.ResultMaxTurns
	ResultMaxBudgetUSD    = event.ResultMaxBudgetUSD
	ResultDuringExecution = event.ResultDuringExecution
)

// Permission modes.
const (
	PermissionDefault     = event.PermissionDefault
	PermissionPlan        = event.PermissionPlan
	PermissionAcceptEdits = event.PermissionAcceptEdits
	PermissionBypass      = event.PermissionBypass
)

// eventOf turns a bus event into the SDK's: the payloads the bus carries
// in the SDK's own types are copied by value; the task and team-task
// payloads, in the bus's Claude Code shape, and the payloads kept as
// fields, are typed here.
func eventOf(e bus.Event) Event {
	out := Event{
		Type: e.Type, Subtype: e.Subtype, SessionID: e.SessionID, UUID: e.UUID, Time: e.Time,
		ParentToolUseID: e.ParentToolUseID, AgentID: e.AgentID, AgentType: e.AgentType, TaskDescription: e.TaskDescription,
		AgentColor: e.AgentColor, Message: e.Message, ToolUseResult: e.ToolUseResult, Partial: e.Partial,
		Todos: todosOf(e.ToolUseResult), Refused: e.Refused,
		Assistant: clone(e.Assistant), Init: clone(e.Init), Result: clone(e.Result),
	}
	if t := e.Task; t != nil {
		out.Task = taskEventOf(e.Subtype, t)
	}
	if e.Subtype == SubtypeCompactBoundary {
		out.Compact = compactOf(e.Fields)
	}
	if e.Subtype == SubtypeAPIRetry {
		out.Retry = retryOf(e.Fields)
	}
	if t := e.TeamTask; t != nil {
		blocked := t.BlockedBy
		if blocked == nil {
			blocked = []string{}
		}
		out.TeamTask = &TeamTaskChange{
			Team: t.Team, By: t.By, Change: t.Change, Fields: t.Fields, From: t.From, To: t.To, Unblocked: t.Unblocked,
			Task: TeamTaskRef{ID: t.ID, Subject: t.Subject, Status: t.Status, Owner: t.Owner, BlockedBy: blocked},
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

func taskEventOf(subtype string, t *bus.Task) *TaskEvent {
	out := &TaskEvent{
		TaskID: t.TaskID, ToolUseID: t.ToolUseID, Description: t.Description, AgentType: t.SubagentType,
		Prompt: t.Prompt, Background: t.Backgrounded, SpawnDepth: t.SpawnDepth, Kind: TaskKind(t.TaskType),
		Status: TaskStatus(t.Status), Summary: t.Summary, SummaryIsReport: t.SummaryIsReport, OutputFile: t.OutputFile, LastToolName: t.LastToolName,
	}
	if subtype != SubtypeTaskStarted {
		out.Usage = &TaskUsage{TotalTokens: t.Usage.TotalTokens, ToolUses: t.Usage.ToolUses, Duration: t.Usage.Duration}
	}
	return out
}

// compactOf reads the compaction payload the runner publishes.
func compactOf(f map[string]any) *CompactInfo {
	m, _ := f["compact_metadata"].(map[string]any)
	trigger, _ := m["trigger"].(string)
	return &CompactInfo{Trigger: trigger, PreTokens: number(m["pre_tokens"])}
}

func retryOf(f map[string]any) *RetryInfo {
	kind, _ := f["error"].(string)
	msg, _ := f["message"].(string)
	return &RetryInfo{
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
func todosOf(meta any) []Todo {
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
	out := make([]Todo, len(found.NewTodos))
	for i, t := range found.NewTodos {
		out[i] = Todo{Content: t.Content, Status: t.Status, ActiveForm: t.ActiveForm}
	}
	return out
}
