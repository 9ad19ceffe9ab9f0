package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/llm"
)

// Line is the JSON object of one event, in Claude Code's shapes. Field
// order follows Claude Code's so that lines read familiarly.
func Line(e event.Event) any {
	switch e.Type {
	case event.TypeSystem:
		if e.Init != nil {
			return initLine(e)
		}
		return systemLine(e)
	case event.TypeAssistant:
		return assistantLine(e)
	case event.TypeUser:
		return userLine(e)
	case event.TypeResult:
		return resultLine(e)
	}
	return map[string]any{"type": string(e.Type), "uuid": e.UUID, "session_id": e.SessionID}
}

// systemLine writes a task_* or other system event with Claude Code's
// key order: type and subtype first, the payload (keys sorted), then uuid
// and session_id.
type systemLine event.Event

func (s systemLine) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteString(`{"type":"system","subtype":`)
	enc.Encode(s.Subtype)
	fields := s.Fields
	if s.Task != nil {
		fields = taskFields(s.Subtype, s.Task)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "type" && k != "subtype" && k != "uuid" && k != "session_id" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteByte(',')
		enc.Encode(k)
		b.WriteByte(':')
		if err := enc.Encode(fields[k]); err != nil {
			return nil, fmt.Errorf("system %s field %s: %w", s.Subtype, k, err)
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

// taskFields are the keys of a task_* line, those Claude Code writes for
// the subtype.
func taskFields(subtype string, t *event.Task) map[string]any {
	f := map[string]any{"task_id": t.TaskID, "tool_use_id": t.ToolUseID}
	usage := map[string]any{"total_tokens": t.Usage.TotalTokens, "tool_uses": t.Usage.ToolUses, "duration_ms": t.Usage.Duration.Milliseconds()}
	switch subtype {
	case event.SubtypeTaskStarted:
		f["description"], f["subagent_type"], f["prompt"] = t.Description, t.SubagentType, t.Prompt
		f["task_type"], f["is_backgrounded"], f["spawn_depth"] = t.TaskType, t.Backgrounded, t.SpawnDepth
	case event.SubtypeTaskProgress:
		f["description"], f["subagent_type"], f["last_tool_name"], f["usage"] = t.Description, t.SubagentType, t.LastToolName, usage
	case event.SubtypeTaskNotification:
		f["status"], f["output_file"], f["summary"], f["usage"] = t.Status, t.OutputFile, t.Summary, usage
	}
	return f
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

func initLine(e event.Event) initJSON {
	in := e.Init
	return initJSON{
		Type: "system", Subtype: "init", Cwd: in.Cwd, SessionID: e.SessionID,
		Tools: nonNil(in.Tools), MCPServers: []any{}, Model: in.Model, PermissionMode: in.PermissionMode,
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

func assistantLine(e event.Event) assistantJSON {
	a := e.Assistant
	if a == nil {
		a = &event.Assistant{}
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

func userLine(e event.Event) userJSON {
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
	PermissionDenials []event.Denial            `json:"permission_denials"`
	Errors            []string                  `json:"errors,omitempty"`
	UUID              string                    `json:"uuid"`
}

func resultLine(e event.Event) resultJSON {
	r := e.Result
	if r == nil {
		r = &event.Result{}
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
		denials = []event.Denial{}
	}
	return resultJSON{
		Type: "result", Subtype: e.Subtype, IsError: r.IsError,
		DurationMS: r.Duration.Milliseconds(), DurationAPIMS: r.APIDuration.Milliseconds(),
		NumTurns: r.NumTurns, Result: r.Result, StopReason: stop, SessionID: e.SessionID,
		TotalCostUSD: r.TotalCostUSD, Usage: r.Usage, ModelUsage: mu, PermissionDenials: denials,
		Errors: r.Errors, UUID: e.UUID,
	}
}

func parent(e event.Event) *string {
	if e.ParentToolUseID == "" {
		return nil
	}
	p := e.ParentToolUseID
	return &p
}

func subagent(e event.Event) subagentFields {
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
