package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// Line is the JSON object of one event, in Claude Code's shapes. Field
// order follows Claude Code's so that lines read familiarly.
func Line(e cadre.Event) any {
	switch e.Type {
	case cadre.EventSystem:
		if e.Init != nil {
			return initLine(e)
		}
		return systemLine(e)
	case cadre.EventAssistant:
		return assistantLine(e)
	case cadre.EventUser:
		return userLine(e)
	case cadre.EventResult:
		return resultLine(e)
	}
	return map[string]any{"type": string(e.Type), "uuid": e.UUID, "session_id": e.SessionID}
}

// systemLine writes a system event other than init (the task_* events,
// a compaction boundary) with Claude Code's key order: type and subtype
// first, the payload's keys in sorted order, then uuid and session_id.
type systemLine cadre.Event

func (s systemLine) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteString(`{"type":"system","subtype":`)
	enc.Encode(s.Subtype)
	for _, f := range systemFields(cadre.Event(s)) {
		b.WriteByte(',')
		enc.Encode(f.key)
		b.WriteByte(':')
		if err := enc.Encode(f.value); err != nil {
			return nil, fmt.Errorf("system %s field %s: %w", s.Subtype, f.key, err)
		}
	}
	if s.ParentToolUseID != "" {
		// A subagent's system line (its compaction) says whose it is, as
		// its messages do.
		for _, kv := range [][2]string{{"parent_tool_use_id", s.ParentToolUseID}, {"agent_id", s.AgentID}, {"subagent_type", s.AgentType}} {
			if kv[1] != "" {
				b.WriteString(`,"` + kv[0] + `":`)
				enc.Encode(kv[1])
			}
		}
	}
	b.WriteString(`,"uuid":`)
	enc.Encode(s.UUID)
	b.WriteString(`,"session_id":`)
	enc.Encode(s.SessionID)
	b.WriteByte('}')
	// Encode ends each value with a newline; JSON allows the whitespace,
	// but lines must stay one line.
	return bytes.ReplaceAll(b.Bytes(), []byte("\n"), nil), nil
}

type field struct {
	key   string
	value any
}

// systemFields are the payload keys of a system line, sorted by key.
func systemFields(e cadre.Event) []field {
	if c := e.Compact; c != nil {
		return []field{{"compact_metadata", compactJSON{PreTokens: c.PreTokens, Trigger: c.Trigger}}}
	}
	t := e.Task
	if t == nil {
		return nil
	}
	switch e.Subtype {
	case cadre.SubtypeTaskStarted:
		return []field{
			{"description", t.Description}, {"is_backgrounded", t.Background}, {"prompt", t.Prompt}, {"spawn_depth", t.SpawnDepth},
			{"subagent_type", t.AgentType}, {"task_id", t.TaskID}, {"task_type", t.Kind}, {"tool_use_id", t.ToolUseID},
		}
	case cadre.SubtypeTaskProgress:
		return []field{
			{"description", t.Description}, {"last_tool_name", t.LastToolName}, {"subagent_type", t.AgentType},
			{"task_id", t.TaskID}, {"tool_use_id", t.ToolUseID}, {"usage", taskUsage(t.Usage)},
		}
	case cadre.SubtypeTaskNotification:
		return []field{
			{"output_file", t.OutputFile}, {"status", taskStatus(t.Status)}, {"summary", t.Summary},
			{"task_id", t.TaskID}, {"tool_use_id", t.ToolUseID}, {"usage", taskUsage(t.Usage)},
		}
	}
	return nil
}

type compactJSON struct {
	PreTokens int64  `json:"pre_tokens"`
	Trigger   string `json:"trigger"`
}

type taskUsageJSON struct {
	DurationMS  int64 `json:"duration_ms"`
	ToolUses    int   `json:"tool_uses"`
	TotalTokens int64 `json:"total_tokens"`
}

func taskUsage(u *cadre.TaskUsage) taskUsageJSON {
	if u == nil {
		return taskUsageJSON{}
	}
	return taskUsageJSON{DurationMS: u.Duration.Milliseconds(), ToolUses: u.ToolUses, TotalTokens: u.TotalTokens}
}

// taskStatus is the status word Claude Code's task lines use.
func taskStatus(s cadre.TaskStatus) string {
	switch s {
	case cadre.TaskKilled:
		return "stopped"
	case cadre.TaskTimeout:
		return "failed"
	}
	return string(s)
}

type initJSON struct {
	Type           string   `json:"type"`
	Subtype        string   `json:"subtype"`
	Cwd            string   `json:"cwd"`
	SessionID      string   `json:"session_id"`
	Tools          []string `json:"tools"`
	MCPServers     []any    `json:"mcp_servers"`
	Model          string   `json:"model"`
	PermissionMode string   `json:"permissionMode"`
	SlashCommands  []string `json:"slash_commands"`
	APIKeySource   string   `json:"apiKeySource"`
	Version        string   `json:"cadre_version"`
	OutputStyle    string   `json:"output_style"`
	Agents         []string `json:"agents"`
	Skills         []string `json:"skills"`
	Plugins        []any    `json:"plugins"`
	UUID           string   `json:"uuid"`
}

func initLine(e cadre.Event) initJSON {
	in := e.Init
	return initJSON{
		Type: "system", Subtype: "init", Cwd: in.Cwd, SessionID: e.SessionID,
		Tools: nonNil(in.Tools), MCPServers: []any{}, Model: in.Model, PermissionMode: string(in.PermissionMode),
		SlashCommands: nonNil(in.SlashCommands), APIKeySource: orNone(in.APIKeySource), Version: in.Version,
		OutputStyle: "default", Agents: nonNil(in.Agents), Skills: nonNil(in.Skills), Plugins: []any{}, UUID: e.UUID,
	}
}

type apiMessage struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         llm.Role       `json:"role"`
	Model        string         `json:"model"`
	Content      []llm.Block    `json:"content"`
	StopReason   llm.StopReason `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        llm.Usage      `json:"usage"`
}

type assistantJSON struct {
	Type            string     `json:"type"`
	Message         apiMessage `json:"message"`
	ParentToolUseID *string    `json:"parent_tool_use_id"`
	subagentFields
	SessionID string `json:"session_id"`
	UUID      string `json:"uuid"`
	Timestamp string `json:"timestamp"`
}

// subagentFields tag a subagent's lines; they are omitted on the main agent's.
type subagentFields struct {
	AgentID         string `json:"agent_id,omitempty"`
	SubagentType    string `json:"subagent_type,omitempty"`
	TaskDescription string `json:"task_description,omitempty"`
}

func assistantLine(e cadre.Event) assistantJSON {
	a := e.Assistant
	if a == nil {
		a = &cadre.AssistantInfo{}
	}
	return assistantJSON{
		Type: "assistant",
		Message: apiMessage{
			ID: a.MessageID, Type: "message", Role: llm.RoleAssistant, Model: a.Model,
			Content: nonNilBlocks(e.Message), StopReason: a.StopReason, Usage: a.Usage,
		},
		ParentToolUseID: parent(e),
		subagentFields:  subagent(e),
		SessionID:       e.SessionID, UUID: e.UUID, Timestamp: stamp(e.Time),
	}
}

type userMessage struct {
	Role    llm.Role    `json:"role"`
	Content []llm.Block `json:"content"`
}

type userJSON struct {
	Type            string      `json:"type"`
	Message         userMessage `json:"message"`
	ParentToolUseID *string     `json:"parent_tool_use_id"`
	subagentFields
	SessionID     string `json:"session_id"`
	UUID          string `json:"uuid"`
	Timestamp     string `json:"timestamp"`
	ToolUseResult any    `json:"tool_use_result,omitempty"`
}

func userLine(e cadre.Event) userJSON {
	return userJSON{
		Type:            "user",
		Message:         userMessage{Role: llm.RoleUser, Content: nonNilBlocks(e.Message)},
		ParentToolUseID: parent(e),
		subagentFields:  subagent(e),
		SessionID:       e.SessionID, UUID: e.UUID, Timestamp: stamp(e.Time),
		ToolUseResult: e.ToolUseResult,
	}
}

type modelUsageJSON struct {
	InputTokens              int64   `json:"inputTokens"`
	OutputTokens             int64   `json:"outputTokens"`
	CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
	CostUSD                  float64 `json:"costUSD"`
}

type resultJSON struct {
	Type              string                    `json:"type"`
	Subtype           string                    `json:"subtype"`
	IsError           bool                      `json:"is_error"`
	DurationMS        int64                     `json:"duration_ms"`
	DurationAPIMS     int64                     `json:"duration_api_ms"`
	NumTurns          int                       `json:"num_turns"`
	Result            string                    `json:"result"`
	StopReason        *llm.StopReason           `json:"stop_reason"`
	SessionID         string                    `json:"session_id"`
	TotalCostUSD      float64                   `json:"total_cost_usd"`
	Usage             llm.Usage                 `json:"usage"`
	ModelUsage        map[string]modelUsageJSON `json:"modelUsage"`
	PermissionDenials []cadre.PermissionDenial  `json:"permission_denials"`
	Errors            []string                  `json:"errors,omitempty"`
	UUID              string                    `json:"uuid"`
}

func resultLine(e cadre.Event) resultJSON {
	r := e.Result
	if r == nil {
		r = &cadre.ResultInfo{}
	}
	mu := make(map[string]modelUsageJSON, len(r.ModelUsage))
	for name, u := range r.ModelUsage {
		mu[name] = modelUsageJSON{
			InputTokens: u.Usage.InputTokens, OutputTokens: u.Usage.OutputTokens,
			CacheReadInputTokens: u.Usage.CacheReadInputTokens, CacheCreationInputTokens: u.Usage.CacheCreationInputTokens,
			CostUSD: u.CostUSD,
		}
	}
	var stop *llm.StopReason
	if r.StopReason != "" {
		s := r.StopReason
		stop = &s
	}
	denials := r.PermissionDenials
	if denials == nil {
		denials = []cadre.PermissionDenial{}
	}
	return resultJSON{
		Type: "result", Subtype: e.Subtype, IsError: r.IsError,
		DurationMS: r.Duration.Milliseconds(), DurationAPIMS: r.APIDuration.Milliseconds(),
		NumTurns: r.NumTurns, Result: r.Result, StopReason: stop, SessionID: e.SessionID,
		TotalCostUSD: r.TotalCostUSD, Usage: r.Usage, ModelUsage: mu, PermissionDenials: denials,
		Errors: r.Errors, UUID: e.UUID,
	}
}

func parent(e cadre.Event) *string {
	if e.ParentToolUseID == "" {
		return nil
	}
	p := e.ParentToolUseID
	return &p
}

func subagent(e cadre.Event) subagentFields {
	return subagentFields{AgentID: e.AgentID, SubagentType: e.AgentType, TaskDescription: e.TaskDescription}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilBlocks(m *llm.Message) []llm.Block {
	if m == nil || m.Content == nil {
		return []llm.Block{}
	}
	return m.Content
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
