package event

import (
	"encoding/json"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// Type is the stream-json "type" of an event.
type Type string

const (
	TypeSystem    Type = "system"
	TypeAssistant Type = "assistant"
	TypeUser      Type = "user"
	TypeResult    Type = "result"
	// TypeStreamEvent is a piece of a model reply still streaming (only
	// when partial messages were asked for).
	TypeStreamEvent Type = "stream_event"
)

// Result subtypes, as Claude Code names them.
const (
	ResultSuccess         = "success"
	ResultMaxTurns        = "error_max_turns"
	ResultDuringExecution = "error_during_execution"
)

// Event is one message of a session's stream.
type Event struct {
	Type Type
	// Subtype: "init", the task_* kinds (SubtypeTask…) and
	// compact_boundary for system events; the outcome for result events.
	Subtype   string
	SessionID string
	UUID      string
	Time      time.Time

	// ParentToolUseID is "" for the main agent's own messages; for a
	// subagent's, the id of the Agent tool call that started it.
	ParentToolUseID string
	// AgentID, AgentType and TaskDescription identify a subagent's messages.
	AgentID, AgentType, TaskDescription string
	// AgentColor is the subagent's color from its agent file, or "".
	AgentColor string

	// Message is set on assistant and user events.
	Message *llm.Message
	// Assistant is set on assistant events.
	Assistant *Assistant
	// ToolUseResult is structured detail of a tool result (user events).
	ToolUseResult any
	// Refused lists the calls whose results this user event carries that
	// the permission layer refused before asking anyone.
	Refused []Refusal

	Init   *Init
	Result *Result
	// Task is the payload of the task_* system events.
	Task *Task
	// TeamTask is the payload of a team_task_changed system event.
	TeamTask *TeamTask
	// Fields holds the payload of other system subtypes (compact_boundary),
	// written as top-level keys.
	Fields map[string]any
	// Partial is a stream event's payload: one Anthropic Messages API
	// streaming event (message_start, content_block_delta, …).
	Partial map[string]any
}

// Assistant is the metadata of an assistant message.
type Assistant struct {
	MessageID  string
	Model      string
	StopReason llm.StopReason
	Usage      llm.Usage
}

// Init is the system/init payload.
type Init struct {
	Cwd            string
	Tools          []string
	Model          string
	PermissionMode string
	Agents         []string
	SlashCommands  []string
	Skills         []string
	Version        string
	APIKeySource   string
	// MCPServers are the runtime's MCP servers and their status when the
	// run starts.
	MCPServers []MCPServer
	// AdditionalDirectories are the folders outside Cwd the agent may
	// work in, absolute.
	AdditionalDirectories []string
}

// MCPServer is one MCP server on the init line, as Claude Code lists it.
type MCPServer struct {
	Name, Status string
}

// Result is the final outcome of a run.
type Result struct {
	IsError           bool
	Result            string
	NumTurns          int
	Duration          time.Duration
	APIDuration       time.Duration
	TotalCostUSD      llm.Cost
	Usage             llm.Usage
	StopReason        llm.StopReason
	Errors            []string
	PermissionDenials []Denial
	// ModelUsage breaks usage and cost down by model name.
	ModelUsage map[string]ModelUsage
	// ModelUsageSinceLast is ModelUsage less what the conversation's
	// previous result counted: this turn's share.
	ModelUsageSinceLast map[string]ModelUsage
	// StructuredOutput is the answer given in the requested JSON schema
	// (Options.JSONSchema), when it was given.
	StructuredOutput json.RawMessage
	// Subagents are the subagent runs of the tree, each with its share.
	Subagents []SubagentCost
}

// SubagentCost is one subagent run's share of a run tree's spending.
type SubagentCost struct {
	AgentID, AgentType, Description string
	Model                           string // "provider:model"
	ParentAgentID                   string // "" for the main agent's children
	Turns                           int
	Usage                           llm.Usage
	CostUSD                         llm.Cost
	Status                          string // a task status
}

// Refusal is a call the permission layer refused before asking anyone:
// by a rule, by the mode, or because nobody could be asked.
type Refusal struct {
	ToolName, ToolUseID string
	// ReasonType is what decided: "rule", "mode" or "other".
	ReasonType string
	// Message is the refusal as the model got it.
	Message string
}

// Denial records a tool call the permission layer refused.
type Denial struct {
	ToolName  string `json:"tool_name"`
	ToolUseID string `json:"tool_use_id"`
	ToolInput any    `json:"tool_input"`
}

// ModelUsage is one model's share of a run.
type ModelUsage struct {
	Usage   llm.Usage
	CostUSD llm.Cost
}
