package event

import (
	"encoding/json"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/record"
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
	// with the SDK's Options.IncludePartialMessages.
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
	SubtypeTeamTask = "team_task_changed"
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
	Kind       record.TaskKind

	// Status is how the run ended: completed, failed, killed
	// or timeout (stream-json writes the last two as Claude Code does,
	// "stopped" and "failed").
	Status record.TaskStatus
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
	// Trigger is "auto", or "manual" for the SDK's Conversation.Compact.
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
	// the SDK's Options.JSONSchema, when the model gave it; Result then holds its
	// JSON text.
	StructuredOutput json.RawMessage
	// Subagents are the subagent runs of the tree, at any depth, whose
	// figures or status changed since the previous result (all of them
	// in a conversation's first): merged by AgentID, the newest entry
	// wins, they are each run's share, and the total less them is the
	// main agent's own. The SDK's Conversation.SubagentCosts lists them all.
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

// Todo is one item of an agent's to-do list (the TodoWrite tool).
type Todo struct {
	Content string
	// Status is "pending", "in_progress" or "completed".
	Status string
	// ActiveForm is Content as it is being done, shown while in progress.
	ActiveForm string
}

// SubagentCost is one subagent run's share of what a conversation spent,
// as the runtime recorded it: what a result's Subagents lists, and
// stream-json's "subagents".
type SubagentCost struct {
	AgentID     string
	AgentType   string
	Description string
	// Model is the model it ran on, as "provider:model".
	Model string
	// ParentAgentID is the agent that started it: "" for the main
	// agent's children.
	ParentAgentID string
	Turns         int
	Usage         llm.Usage
	// CostUSD is unknown when its model has no price.
	CostUSD llm.Cost
	Status  record.TaskStatus
}

// PermissionMode says what a session may do without asking.
type PermissionMode string

// Permission modes.
const (
	PermissionDefault     PermissionMode = "default"
	PermissionPlan        PermissionMode = "plan"
	PermissionAcceptEdits PermissionMode = "acceptEdits"
	PermissionBypass      PermissionMode = "bypassPermissions"
)
