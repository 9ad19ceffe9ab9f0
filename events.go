package cadre

import (
	"encoding/json"
	"time"

	"github.com/cadre-dev/cadre/internal/builtin"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/llm"
)

// Event is one message of a session's stream: system (init, the task_*
// events of background subagents, compaction), an assistant or user
// message (a subagent's too, tagged with ParentToolUseID), or the result.
// Type and Subtype say which; the matching field holds the payload.
type Event struct {
	Type EventType
	// Subtype is, for system events, SubtypeInit, a task subtype or
	// SubtypeCompactBoundary; for result events, the outcome
	// (ResultSuccess, ResultMaxTurns, ResultDuringExecution).
	Subtype string
	// SessionID is the main session's, for every event of its run tree.
	SessionID string
	// UUID identifies the event; a message's is also its transcript id.
	UUID string
	Time time.Time

	// ParentToolUseID is "" for the main agent's own messages; for a
	// subagent's, the id of the Agent tool call that started it.
	ParentToolUseID string
	// AgentID (the subagent's session id), AgentType (its definition) and
	// TaskDescription (the Agent call's description) identify a
	// subagent's messages.
	AgentID, AgentType, TaskDescription string
	// AgentColor is the subagent's color from its agent file (red, blue,
	// green, yellow, purple, orange, pink, cyan), for displays; "" for
	// none.
	AgentColor string

	// Message is set on assistant and user events, and on a compaction
	// boundary (the summary that replaced the older turns).
	Message *llm.Message
	// Assistant is set on assistant events.
	Assistant *AssistantInfo
	// ToolUseResult is the structured detail of a user event's tool
	// results (tool.Result.Meta): one value for one call, a map by
	// tool_use id for several.
	ToolUseResult any
	// Todos is the agent's to-do list as a TodoWrite call in this user
	// event left it (nil when the event has none): the agent is the
	// event's (ParentToolUseID, AgentID).
	Todos []Todo
	// Refused lists the calls of a user event's tool results that the
	// permission layer refused before asking anyone (a deny rule, the
	// mode, nobody to ask); a canUseTool or prompt refusal is not here.
	Refused []Refusal

	Init    *InitInfo    // SubtypeInit
	Task    *TaskEvent   // SubtypeTaskStarted, SubtypeTaskProgress, SubtypeTaskNotification
	Compact *CompactInfo // SubtypeCompactBoundary
	Retry   *RetryInfo   // SubtypeAPIRetry
	// TeamTask is a SubtypeTeamTask event's change.
	TeamTask *TeamTaskChange
	Result   *ResultInfo // EventResult
	// Partial is an EventStreamEvent's payload: one event of the Anthropic
	// Messages API's stream (message_start, content_block_start,
	// content_block_delta, content_block_stop, message_delta,
	// message_stop), whatever the provider, as Claude Code writes it in
	// its stream_event lines.
	Partial map[string]any
}

// EventType is the kind of an Event, as stream-json's "type" names it.
type EventType string

// Event types.
const (
	EventSystem    EventType = "system"
	EventAssistant EventType = "assistant"
	EventUser      EventType = "user"
	EventResult    EventType = "result"
	// EventStreamEvent is a piece of a model reply still streaming; only
	// with Options.IncludePartialMessages.
	EventStreamEvent EventType = "stream_event"
)

// Subtypes of system events.
const (
	SubtypeInit = "init"
	// A background run started, made progress, ended (its notification
	// was posted to the agent that started it).
	SubtypeTaskStarted      = "task_started"
	SubtypeTaskProgress     = "task_progress"
	SubtypeTaskNotification = "task_notification"
	// Older turns were replaced by a summary.
	SubtypeCompactBoundary = "compact_boundary"
	// A model call failed and is retried after a wait (Claude Code's
	// api_retry); the event's agent is the one whose call it is.
	SubtypeAPIRetry = "api_retry"
	// A team's shared task list changed (cadre's own line: a TaskCreate
	// or TaskUpdate of the lead or a teammate, docs/agents.md "Teams").
	// A teammate's change carries its spawn call's ParentToolUseID.
	SubtypeTeamTask = event.SubtypeTeamTask
)

// TeamTaskChange is what a TaskCreate or TaskUpdate did to a team's task
// list.
type TeamTaskChange struct {
	Team string `json:"team"`
	// By is who changed it: "main" (the lead) or a teammate's name.
	By string `json:"by"`
	// Change is created, updated or deleted; Fields what an update
	// changed, in Claude Code's names (status, owner, blockedBy, …).
	Change string   `json:"change"`
	Fields []string `json:"fields,omitempty"`
	// From and To are the status before and after, when it changed.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Task is the task after the change (before it, when deleted).
	Task TeamTaskRef `json:"task"`
	// Unblocked are the tasks the change left free to claim.
	Unblocked []string `json:"unblocked,omitempty"`
}

// TeamTaskRef is a task of a team's list as a change names it.
type TeamTaskRef struct {
	ID        string   `json:"id"`
	Subject   string   `json:"subject"`
	Status    string   `json:"status"`
	Owner     string   `json:"owner,omitempty"`
	BlockedBy []string `json:"blocked_by"`
}

// RetryInfo is a model call about to be retried.
type RetryInfo struct {
	// Attempt counts the retries (1 for the first) of at most MaxRetries;
	// Delay is the wait before it.
	Attempt, MaxRetries int
	Delay               time.Duration
	// Status is the HTTP status of the failure (0 without a response);
	// Kind its kind in Claude Code's words (rate_limit, overloaded,
	// server_error, …); Message the error as text.
	Status        int
	Kind, Message string
}

// Subtypes of result events, as Claude Code names them.
const (
	ResultSuccess         = "success"
	ResultMaxTurns        = "error_max_turns"
	ResultMaxBudgetUSD    = "error_max_budget_usd"
	ResultDuringExecution = "error_during_execution"
)

// InitInfo is the first event of a run: what the main agent works with.
type InitInfo struct {
	Cwd string
	// Tools is the exact pool the model is offered.
	Tools          []string
	Model          string
	PermissionMode PermissionMode
	// Agents are the subagents the main agent may be offered.
	Agents        []string
	SlashCommands []string
	Skills        []string
	Version       string
	// APIKeySource names the variable the key came from, or "none".
	APIKeySource string
	// MCPServers are the MCP servers with their status (connected,
	// failed, pending, needs-approval, disabled) when the run starts.
	MCPServers []MCPServerStatus
	// AdditionalDirectories are the folders outside Cwd the agent may
	// work in (permissions.additionalDirectories, --add-dir), absolute.
	AdditionalDirectories []string
}

// MCPServerStatus is an MCP server's name and status on the init event.
type MCPServerStatus struct {
	Name, Status string
}

// AssistantInfo is the metadata of a model reply.
type AssistantInfo struct {
	MessageID  string
	Model      string
	StopReason llm.StopReason
	Usage      llm.Usage
}

// TaskEvent is the payload of the task_* events of a background run.
// Which fields are set depends on the subtype, as in Claude Code's lines:
// started carries Prompt, Background, SpawnDepth and Kind; progress the
// Usage so far and LastToolName; the notification Status, Summary,
// OutputFile and the final Usage.
type TaskEvent struct {
	// TaskID is the task's id (the subagent's agent id); ToolUseID the
	// Agent call that launched it.
	TaskID, ToolUseID string
	// Description is the Agent call's description; AgentType the agent
	// definition that runs.
	Description, AgentType string

	Prompt     string
	Background bool
	// SpawnDepth is 1 for a child of the main agent, 2 for a grandchild…
	SpawnDepth int
	Kind       TaskKind

	// Status is how the run ended: TaskCompleted, TaskFailed, TaskKilled
	// or TaskTimeout (stream-json writes the last two as Claude Code does,
	// "stopped" and "failed").
	Status TaskStatus
	// Summary is the agent's report when it completed with one
	// (SummaryIsReport), else a sentence saying how it ended.
	Summary         string
	SummaryIsReport bool
	OutputFile      string

	Usage        *TaskUsage
	LastToolName string
}

// TaskUsage is what a background run has used so far.
type TaskUsage struct {
	TotalTokens int64
	ToolUses    int
	Duration    time.Duration
}

// CompactInfo describes a compaction.
type CompactInfo struct {
	// Trigger is "auto", or "manual" for Conversation.Compact.
	Trigger string
	// PreTokens is the size of the context that triggered it.
	PreTokens int64
}

// ResultInfo is the outcome of a run (the last event), its usage and cost
// those of the whole run tree, subagents included.
type ResultInfo struct {
	IsError      bool
	Result       string
	NumTurns     int
	Duration     time.Duration
	APIDuration  time.Duration
	TotalCostUSD llm.Cost
	Usage        llm.Usage
	StopReason   llm.StopReason
	// Errors say why a run failed.
	Errors            []string
	PermissionDenials []PermissionDenial
	// ModelUsage breaks usage and cost down by model name.
	ModelUsage map[string]ModelUsage
	// ModelUsageSinceLast is the share of ModelUsage spent since the
	// conversation's previous result.
	ModelUsageSinceLast map[string]ModelUsage
	// StructuredOutput is the answer in the JSON schema of
	// Options.JSONSchema, when the model gave it; Result then holds its
	// JSON text.
	StructuredOutput json.RawMessage
	// Subagents are the subagent runs of the tree, at any depth, whose
	// figures or status changed since the previous result (all of them
	// in a conversation's first): merged by AgentID, the newest entry
	// wins, they are each run's share, and the total less them is the
	// main agent's own. Conversation.SubagentCosts lists them all.
	// (Listing every run in every result made a run of 10,000 background
	// children write 400 MB of results.)
	Subagents []SubagentCost
}

// PermissionDenial is a tool call the permission layer refused.
type PermissionDenial struct {
	ToolName  string `json:"tool_name"`
	ToolUseID string `json:"tool_use_id"`
	ToolInput any    `json:"tool_input"`
}

// ModelUsage is one model's share of a run.
type ModelUsage struct {
	Usage   llm.Usage
	CostUSD llm.Cost
}

// Refusal is a call refused before anyone was asked.
type Refusal struct {
	ToolName, ToolUseID string
	// ReasonType says what decided: "rule", "mode" or "other".
	ReasonType string
	// Message is the refusal as the model got it.
	Message string
}

// eventOf converts a bus event for SDK users.
func eventOf(e event.Event) Event {
	out := Event{
		Type: EventType(e.Type), Subtype: e.Subtype, SessionID: e.SessionID, UUID: e.UUID, Time: e.Time,
		ParentToolUseID: e.ParentToolUseID, AgentID: e.AgentID, AgentType: e.AgentType, TaskDescription: e.TaskDescription,
		AgentColor: e.AgentColor, Message: e.Message, ToolUseResult: e.ToolUseResult, Partial: e.Partial,
		Todos: todosOf(e.ToolUseResult),
	}
	for _, r := range e.Refused {
		out.Refused = append(out.Refused, Refusal{ToolName: r.ToolName, ToolUseID: r.ToolUseID, ReasonType: r.ReasonType, Message: r.Message})
	}
	if a := e.Assistant; a != nil {
		out.Assistant = &AssistantInfo{MessageID: a.MessageID, Model: a.Model, StopReason: a.StopReason, Usage: a.Usage}
	}
	if in := e.Init; in != nil {
		out.Init = &InitInfo{
			Cwd: in.Cwd, Tools: in.Tools, Model: in.Model, PermissionMode: PermissionMode(in.PermissionMode),
			Agents: in.Agents, SlashCommands: in.SlashCommands, Skills: in.Skills, Version: in.Version, APIKeySource: in.APIKeySource,
			AdditionalDirectories: in.AdditionalDirectories,
		}
		for _, m := range in.MCPServers {
			out.Init.MCPServers = append(out.Init.MCPServers, MCPServerStatus{Name: m.Name, Status: m.Status})
		}
	}
	if r := e.Result; r != nil {
		out.Result = resultOf(r)
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

func resultOf(r *event.Result) *ResultInfo {
	out := &ResultInfo{
		IsError: r.IsError, Result: r.Result, NumTurns: r.NumTurns, Duration: r.Duration, APIDuration: r.APIDuration,
		TotalCostUSD: r.TotalCostUSD, Usage: r.Usage, StopReason: r.StopReason, Errors: r.Errors,
		StructuredOutput: r.StructuredOutput, Subagents: convert(r.Subagents, subagentCostOf),
	}
	for _, d := range r.PermissionDenials {
		out.PermissionDenials = append(out.PermissionDenials, PermissionDenial{ToolName: d.ToolName, ToolUseID: d.ToolUseID, ToolInput: d.ToolInput})
	}
	out.ModelUsage = modelUsageOf(r.ModelUsage)
	out.ModelUsageSinceLast = modelUsageOf(r.ModelUsageSinceLast)
	return out
}

func taskEventOf(subtype string, t *event.Task) *TaskEvent {
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

// Todo is one item of an agent's to-do list (the TodoWrite tool).
type Todo struct {
	Content string
	// Status is "pending", "in_progress" or "completed".
	Status string
	// ActiveForm is Content as it is being done, shown while in progress.
	ActiveForm string
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

func modelUsageOf(in map[string]event.ModelUsage) map[string]ModelUsage {
	if in == nil {
		return nil
	}
	out := make(map[string]ModelUsage, len(in))
	for name, u := range in {
		out[name] = ModelUsage{Usage: u.Usage, CostUSD: u.CostUSD}
	}
	return out
}
