package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/catalog"
	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/internal/jsonpart"
	"github.com/cadre-dev/cadre/llm"
)

// Line is the JSON object of one event, in Claude Code's shapes. Field
// order follows Claude Code's so that lines read familiarly.
func Line(e cadre.Event) any {
	return line(e, nil)
}

// line is Line with the names of the tools called so far, by call id, for
// the shape of their results (resultContent); nil knows none.
func line(e cadre.Event, tools map[string]string) any {
	switch e.Type {
	case cadre.EventSystem:
		if e.Init != nil {
			return initLine(e)
		}
		return systemLine(e)
	case cadre.EventAssistant:
		return assistantLine(e)
	case cadre.EventUser:
		return userLine(e, tools)
	case cadre.EventResult:
		return resultLine(e)
	case cadre.EventStreamEvent:
		return streamEventLine(e)
	}
	return map[string]any{"type": string(e.Type), "uuid": e.UUID, "session_id": e.SessionID}
}

// systemLine writes a system event other than init (the task_* events,
// a compaction boundary) with Claude Code's key order: type and subtype
// first, the payload's keys in sorted order, then uuid and session_id.
type systemLine cadre.Event

func (s systemLine) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := s.writeTo(&b, jsonpart.New()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeTo writes s's JSON to b, compact, so that the stream can write it
// as it is: as a json.Marshaler inside encoding/json it is parsed and
// copied again, and task lines are a few of every background child's.
func (s systemLine) writeTo(b *bytes.Buffer, e *jsonpart.Encoder) error {
	val := func(v any) error {
		j, err := e.Bytes(v)
		b.Write(j)
		return err
	}
	// A string cannot fail to encode.
	str := func(v string) { _ = val(v) }
	b.WriteString(`{"type":"system","subtype":`)
	str(s.Subtype)
	for _, f := range systemFields(cadre.Event(s)) {
		b.WriteByte(',')
		str(f.key)
		b.WriteByte(':')
		if err := val(f.value); err != nil {
			return fmt.Errorf("system %s field %s: %w", s.Subtype, f.key, err)
		}
	}
	if s.ParentToolUseID != "" {
		// A subagent's system line (its compaction) says whose it is, as
		// its messages do.
		for _, kv := range [][2]string{{"parent_tool_use_id", s.ParentToolUseID}, {"agent_id", s.AgentID}, {"subagent_type", s.AgentType}} {
			if kv[1] != "" {
				b.WriteString(`,"` + kv[0] + `":`)
				str(kv[1])
			}
		}
	}
	b.WriteString(`,"uuid":`)
	str(s.UUID)
	b.WriteString(`,"session_id":`)
	str(s.SessionID)
	b.WriteByte('}')
	return nil
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
	if tt := e.TeamTask; tt != nil {
		out := []field{{"by", tt.By}, {"change", tt.Change}}
		if len(tt.Fields) > 0 {
			out = append(out, field{"fields", tt.Fields})
		}
		if tt.To != "" {
			out = append(out, field{"status_change", map[string]string{"from": tt.From, "to": tt.To}})
		}
		out = append(out, field{"task", tt.Task}, field{"team", tt.Team})
		if len(tt.Unblocked) > 0 {
			out = append(out, field{"unblocked", tt.Unblocked})
		}
		return out
	}
	if r := e.Retry; r != nil {
		var status any // null without an HTTP response
		if r.Status != 0 {
			status = r.Status
		}
		return []field{{"attempt", r.Attempt}, {"error", r.Kind}, {"error_status", status}, {"max_retries", r.MaxRetries}, {"retry_delay_ms", r.Delay.Milliseconds()}}
	}
	t := e.Task
	if t == nil {
		return nil
	}
	switch e.Subtype {
	case cadre.SubtypeTaskStarted:
		if t.Kind == cadre.TaskLocalBash {
			// Claude Code's shell: no agent type, prompt or spawn depth.
			return []field{
				{"description", t.Description}, {"is_backgrounded", t.Background},
				{"run_id", t.TaskID}, {"task_id", t.TaskID}, {"task_type", t.Kind}, {"tool_use_id", t.ToolUseID},
			}
		}
		return []field{
			{"description", t.Description}, {"is_backgrounded", t.Background}, {"prompt", t.Prompt}, {"spawn_depth", t.SpawnDepth},
			{"run_id", t.TaskID}, {"subagent_type", t.AgentType}, {"task_id", t.TaskID}, {"task_type", t.Kind}, {"tool_use_id", t.ToolUseID},
		}
	case cadre.SubtypeTaskProgress:
		return []field{
			{"description", t.Description}, {"last_tool_name", t.LastToolName}, {"run_id", t.TaskID}, {"subagent_type", t.AgentType},
			{"task_id", t.TaskID}, {"tool_use_id", t.ToolUseID}, {"usage", taskUsage(t.Usage)},
		}
	case cadre.SubtypeTaskNotification:
		fs := []field{{"output_file", t.OutputFile}, {"run_id", t.TaskID}, {"status", taskStatus(t.Status)}, {"summary", t.Summary}}
		if t.SummaryIsReport {
			fs = append(fs, field{"summary_is_report", true})
		}
		return append(fs, field{"task_id", t.TaskID}, field{"tool_use_id", t.ToolUseID}, field{"usage", taskUsage(t.Usage)})
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
	Type           string          `json:"type"`
	Subtype        string          `json:"subtype"`
	Cwd            string          `json:"cwd"`
	SessionID      string          `json:"session_id"`
	Tools          []string        `json:"tools"`
	MCPServers     []mcpServerJSON `json:"mcp_servers"`
	Model          string          `json:"model"`
	PermissionMode string          `json:"permissionMode"`
	SlashCommands  []string        `json:"slash_commands"`
	APIKeySource   string          `json:"apiKeySource"`
	// ClaudeCodeVersion is cadre's version under the key the Agent SDK
	// requires; cadre_version says the same under cadre's own name.
	ClaudeCodeVersion string   `json:"claude_code_version"`
	Version           string   `json:"cadre_version"`
	OutputStyle       string   `json:"output_style"`
	Agents            []string `json:"agents"`
	Skills            []string `json:"skills"`
	Plugins           []any    `json:"plugins"`
	UUID              string   `json:"uuid"`
	// OriginalCwd is where the session started: cadre's working directory
	// never moves, so it is Cwd.
	OriginalCwd           string   `json:"original_cwd"`
	AdditionalDirectories []string `json:"additional_directories"`
}

type mcpServerJSON struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

func mcpServers(in []cadre.MCPServerStatus) []mcpServerJSON {
	out := make([]mcpServerJSON, len(in))
	for i, m := range in {
		out[i] = mcpServerJSON{Name: m.Name, Status: m.Status}
	}
	return out
}

func initLine(e cadre.Event) initJSON {
	in := e.Init
	return initJSON{
		Type: "system", Subtype: "init", Cwd: in.Cwd, SessionID: e.SessionID,
		Tools: nonNil(in.Tools), MCPServers: mcpServers(in.MCPServers), Model: claudeModel(in.Model), PermissionMode: string(in.PermissionMode),
		SlashCommands: nonNil(in.SlashCommands), APIKeySource: sdkKeySource(in.APIKeySource),
		ClaudeCodeVersion: in.Version, Version: in.Version,
		OutputStyle: "default", Agents: nonNil(in.Agents), Skills: nonNil(in.Skills), Plugins: []any{}, UUID: e.UUID,
		OriginalCwd: in.Cwd, AdditionalDirectories: nonNil(in.AdditionalDirectories),
	}
}

type apiMessage struct {
	ID      string      `json:"id"`
	Type    string      `json:"type"`
	Role    llm.Role    `json:"role"`
	Model   string      `json:"model"`
	Content []llm.Block `json:"content"`
	// StopReason is null on all but the last line of a reply (Claude
	// Code's lines, one per content block).
	StopReason   *llm.StopReason `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        llm.Usage       `json:"usage"`
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
			Content: nonNilBlocks(e.Message), StopReason: stopReason(a.StopReason), Usage: a.Usage,
		},
		ParentToolUseID: parent(e),
		subagentFields:  subagent(e),
		SessionID:       e.SessionID, UUID: e.UUID, Timestamp: stamp(e.Time),
	}
}

type userMessage struct {
	Role    llm.Role `json:"role"`
	Content []any    `json:"content"`
}

// toolResultJSON is a tool_result block whose content is a plain string,
// as Claude Code writes the results of its built-in tools and refusals.
type toolResultJSON struct {
	ToolUseID string `json:"tool_use_id"`
	Type      string `json:"type"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error"`
}

// userContent is a user message's blocks as Claude Code writes them: a
// tool result that is only text is one string, except the results of
// Agent calls and MCP tools, which keep their list of blocks (Claude Code
// passes those on as the tool gave them).
func userContent(m *llm.Message, tools map[string]string) []any {
	blocks := nonNilBlocks(m)
	out := make([]any, len(blocks))
	for i, b := range blocks {
		out[i] = b
		if b.Type != llm.BlockToolResult || !onlyText(b.Content) {
			continue
		}
		switch name := tools[b.ToolUseID]; {
		case name == "Agent" || name == "Task" || strings.HasPrefix(name, "mcp__"):
			continue
		}
		var text strings.Builder
		for j, c := range b.Content {
			if j > 0 {
				text.WriteString("\n")
			}
			text.WriteString(c.Text)
		}
		out[i] = toolResultJSON{ToolUseID: b.ToolUseID, Type: "tool_result", Content: text.String(), IsError: b.IsError}
	}
	return out
}

func onlyText(bs []llm.Block) bool {
	for _, b := range bs {
		if b.Type != llm.BlockText {
			return false
		}
	}
	return true
}

type userJSON struct {
	Type    string      `json:"type"`
	Message userMessage `json:"message"`
	userTail
}

// userTail is a user line's fields after its message.
type userTail struct {
	ParentToolUseID *string `json:"parent_tool_use_id"`
	subagentFields
	SessionID     string `json:"session_id"`
	UUID          string `json:"uuid"`
	Timestamp     string `json:"timestamp"`
	ToolUseResult any    `json:"tool_use_result,omitempty"`
}

func userLine(e cadre.Event, tools map[string]string) userJSON {
	return userJSON{
		Type:    "user",
		Message: userMessage{Role: llm.RoleUser, Content: userContent(e.Message, tools)},
		userTail: userTail{
			ParentToolUseID: parent(e),
			subagentFields:  subagent(e),
			SessionID:       e.SessionID, UUID: e.UUID, Timestamp: stamp(e.Time),
			ToolUseResult: e.ToolUseResult,
		},
	}
}

// writeTo writes u as encode does, its content a block at a time and its
// structured results a call at a time (internal/jsonpart): the results of
// a launch of 10,000 background agents are one user line of 12 MB, which
// encoding/json would build whole in a buffer it then keeps in its pool.
// The fields after the content are encoded first, so that the one part
// that can fail (a tool's structured result) fails before anything is
// written.
func (u userJSON) writeTo(w io.Writer, e *jsonpart.Encoder) error {
	content := func(w io.Writer) error { return jsonpart.Array(w, e, u.Message.Content) }
	message := func(w io.Writer) error {
		role := struct {
			Role llm.Role `json:"role"`
		}{u.Message.Role}
		return jsonpart.Object(w, e, jsonpart.Fields(role), jsonpart.Field("content", content))
	}
	typ := struct {
		Type string `json:"type"`
	}{u.Type}
	members := []jsonpart.Member{jsonpart.Fields(typ), jsonpart.Field("message", message), jsonpart.Fields(u.userTail)}
	if result, ok := u.ToolUseResult.(map[string]any); ok && len(result) > 0 {
		// A map — one call's structured result, or many calls' by
		// tool_use id — is written a member at a time as well. Each
		// member is encoded once first, so that one that cannot be
		// encoded fails before anything is written.
		for _, v := range result {
			if _, err := e.Bytes(v); err != nil {
				return fmt.Errorf("tool_use_result: %w", err)
			}
		}
		tail := u.userTail
		tail.ToolUseResult = nil
		members[2] = jsonpart.Fields(tail)
		members = append(members, jsonpart.Field("tool_use_result", func(w io.Writer) error { return jsonpart.Map(w, e, result) }))
	}
	if err := jsonpart.Object(w, e, members...); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// modelUsageJSON is one model's entry of modelUsage, with every field the
// Agent SDK's ModelUsage type requires. cadre counts no web searches, and
// does not know a model's output limit (0).
// streamEventJSON is a stream_event line (--include-partial-messages):
// Claude Code's SDKPartialAssistantMessage.
type streamEventJSON struct {
	Type            string         `json:"type"`
	Event           map[string]any `json:"event"`
	SessionID       string         `json:"session_id"`
	ParentToolUseID *string        `json:"parent_tool_use_id"`
	subagentFields
	UUID string `json:"uuid"`
}

func streamEventLine(e cadre.Event) streamEventJSON {
	return streamEventJSON{
		Type: "stream_event", Event: e.Partial, SessionID: e.SessionID, ParentToolUseID: parent(e),
		subagentFields: subagent(e), UUID: e.UUID,
	}
}

type modelUsageJSON struct {
	InputTokens              int64    `json:"inputTokens"`
	OutputTokens             int64    `json:"outputTokens"`
	CacheReadInputTokens     int64    `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64    `json:"cacheCreationInputTokens"`
	WebSearchRequests        int64    `json:"webSearchRequests"`
	CostUSD                  llm.Cost `json:"costUSD"` // null when unknown
	ContextWindow            int64    `json:"contextWindow"`
	MaxOutputTokens          int64    `json:"maxOutputTokens"`
}

// resultUsageJSON is the result's usage in the shape of the Anthropic
// API's BetaUsage with no field null, as the Agent SDK's NonNullableUsage
// requires; the fields cadre has no figure for hold their zero values, as
// Claude Code writes them when nothing was used.
type resultUsageJSON struct {
	InputTokens              int64              `json:"input_tokens"`
	CacheCreationInputTokens int64              `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64              `json:"cache_read_input_tokens"`
	OutputTokens             int64              `json:"output_tokens"`
	OutputTokensDetails      thinkingTokensJSON `json:"output_tokens_details"`
	ServerToolUse            serverToolUseJSON  `json:"server_tool_use"`
	ServiceTier              string             `json:"service_tier"`
	CacheCreation            cacheCreationJSON  `json:"cache_creation"`
	InferenceGeo             string             `json:"inference_geo"`
	Iterations               []any              `json:"iterations"`
	Speed                    string             `json:"speed"`
	FallbackCredit           *struct{}          `json:"fallback_credit"`
}

type thinkingTokensJSON struct {
	ThinkingTokens int64 `json:"thinking_tokens"`
}

type serverToolUseJSON struct {
	WebSearchRequests int64 `json:"web_search_requests"`
	WebFetchRequests  int64 `json:"web_fetch_requests"`
}

type cacheCreationJSON struct {
	Ephemeral1hInputTokens int64 `json:"ephemeral_1h_input_tokens"`
	Ephemeral5mInputTokens int64 `json:"ephemeral_5m_input_tokens"`
}

func resultUsage(u llm.Usage) resultUsageJSON {
	return resultUsageJSON{
		InputTokens: u.InputTokens, CacheCreationInputTokens: u.CacheCreationInputTokens,
		CacheReadInputTokens: u.CacheReadInputTokens, OutputTokens: u.OutputTokens,
		ServiceTier: "standard", Iterations: []any{}, Speed: "standard",
	}
}

type resultJSON struct {
	Type          string `json:"type"`
	Subtype       string `json:"subtype"`
	IsError       bool   `json:"is_error"`
	DurationMS    int64  `json:"duration_ms"`
	DurationAPIMS int64  `json:"duration_api_ms"`
	NumTurns      int    `json:"num_turns"`
	// Result is the answer; an error result has none (the Agent SDK's
	// SDKResultError type has no such field).
	Result       *string                   `json:"result,omitempty"`
	StopReason   *llm.StopReason           `json:"stop_reason"`
	SessionID    string                    `json:"session_id"`
	TotalCostUSD llm.Cost                  `json:"total_cost_usd"` // null when unknown
	Usage        resultUsageJSON           `json:"usage"`
	ModelUsage   map[string]modelUsageJSON `json:"modelUsage"`
	// ModelUsageSinceLast is this turn's share of ModelUsage.
	ModelUsageSinceLast map[string]modelUsageJSON `json:"model_usage_since_last_result"`
	PermissionDenials   []cadre.PermissionDenial  `json:"permission_denials"`
	// Errors is on error results only, where the SDK requires it.
	Errors []string `json:"errors,omitempty"`
	// StructuredOutput is the answer in the --json-schema schema.
	StructuredOutput json.RawMessage `json:"structured_output,omitempty"`
	UUID             string          `json:"uuid"`
	// ResultIndex counts the results of the session before this one
	// (stream-json only, as Claude Code's).
	ResultIndex int `json:"result_index"`
	// Origin says the turn answered a background task's notification.
	Origin *originJSON `json:"origin,omitempty"`
	// Subagents is cadre's extension: each subagent run of the tree with
	// its share of the cost, when there was any.
	Subagents []subagentCostJSON `json:"subagents,omitempty"`
	// TerminalReason is why the turn ended, in Claude Code's words, for
	// the outcomes where cadre's and Claude Code's reasons are the same.
	TerminalReason string `json:"terminal_reason,omitempty"`
}

// subagentCostJSON is one entry of the result's "subagents": its usage in
// the Anthropic API's snake_case shape, its cost null when unknown.
type subagentCostJSON struct {
	AgentID     string    `json:"agent_id"`
	AgentType   string    `json:"agent_type"`
	Description string    `json:"description"`
	Model       string    `json:"model"`
	NumTurns    int       `json:"num_turns"`
	Usage       llm.Usage `json:"usage"`
	CostUSD     llm.Cost  `json:"cost_usd"`
	Status      string    `json:"status"`
	// Parent is the agent id of the run that started it; null for the
	// main agent's children.
	Parent *string `json:"parent"`
}

func subagentCosts(list []cadre.SubagentCost) []subagentCostJSON {
	out := make([]subagentCostJSON, 0, len(list))
	for _, s := range list {
		e := subagentCostJSON{
			AgentID: s.AgentID, AgentType: s.AgentType, Description: s.Description, Model: s.Model,
			NumTurns: s.Turns, Usage: s.Usage, CostUSD: s.CostUSD, Status: string(s.Status),
		}
		if s.ParentAgentID != "" {
			p := s.ParentAgentID
			e.Parent = &p
		}
		out = append(out, e)
	}
	return out
}

// terminalReasons are Claude Code's terminal_reason values for the
// result subtypes that say the same; an error during execution may be an
// interrupt or a failure, which the subtype does not tell apart.
var terminalReasons = map[string]string{
	cadre.ResultSuccess: "completed", cadre.ResultMaxTurns: "max_turns", cadre.ResultMaxBudgetUSD: "budget_exhausted",
}

// modelUsageLines is a result's usage by model in the SDK's ModelUsage
// shape, keyed by Claude Code's model names.
func modelUsageLines(in map[string]cadre.ModelUsage) map[string]modelUsageJSON {
	out := make(map[string]modelUsageJSON, len(in))
	for name, u := range in {
		var maxOut int64
		if m, ok := catalog.Default().Lookup(bareModel(name)); ok {
			maxOut = m.MaxOutput
		}
		out[claudeModel(name)] = modelUsageJSON{
			InputTokens: u.Usage.InputTokens, OutputTokens: u.Usage.OutputTokens,
			CacheReadInputTokens: u.Usage.CacheReadInputTokens, CacheCreationInputTokens: u.Usage.CacheCreationInputTokens,
			CostUSD: u.CostUSD, ContextWindow: compact.Window(bareModel(name)), MaxOutputTokens: maxOut,
		}
	}
	return out
}

func resultLine(e cadre.Event) resultJSON {
	r := e.Result
	if r == nil {
		r = &cadre.ResultInfo{}
	}
	mu, since := modelUsageLines(r.ModelUsage), modelUsageLines(r.ModelUsageSinceLast)
	var stop *llm.StopReason
	if r.StopReason != "" {
		s := r.StopReason
		stop = &s
	}
	denials := r.PermissionDenials
	if denials == nil {
		denials = []cadre.PermissionDenial{}
	}
	out := resultJSON{
		Type: "result", Subtype: e.Subtype, IsError: r.IsError,
		DurationMS: r.Duration.Milliseconds(), DurationAPIMS: r.APIDuration.Milliseconds(),
		NumTurns: r.NumTurns, StopReason: stop, SessionID: e.SessionID,
		TotalCostUSD: r.TotalCostUSD, Usage: resultUsage(r.Usage), ModelUsage: mu, ModelUsageSinceLast: since, PermissionDenials: denials,
		UUID: e.UUID, TerminalReason: terminalReasons[e.Subtype],
	}
	if len(r.Subagents) > 0 {
		out.Subagents = subagentCosts(r.Subagents)
	}
	if r.IsError {
		out.Errors = r.Errors
		if out.Errors == nil {
			out.Errors = []string{}
		}
	} else {
		answer := r.Result
		out.Result = &answer
		out.StructuredOutput = r.StructuredOutput
	}
	return out
}

func stopReason(r llm.StopReason) *llm.StopReason {
	if r == "" {
		return nil
	}
	return &r
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

// sdkKeySource is the init line's apiKeySource, one of the values the
// Agent SDK's ApiKeySource type allows: ANTHROPIC_API_KEY as cadre
// reports it, "none" without a key, and "user" for a key the user gave
// some other way (OPENAI_API_KEY, a provider's apiKey in settings).
func sdkKeySource(s string) string {
	switch s {
	case "", "none":
		return "none"
	case "ANTHROPIC_API_KEY":
		return s
	}
	return "user"
}

// claudeModel spells an Anthropic model as Claude Code does, by its bare
// id ("claude-sonnet-5-5", not "anthropic:claude-sonnet-5-5"); other
// providers' models keep cadre's provider:model name, which says where
// they run.
func claudeModel(name string) string {
	if m, ok := strings.CutPrefix(name, "anthropic:"); ok {
		return m
	}
	return name
}

// bareModel is a model name without its provider.
func bareModel(name string) string {
	if _, m, ok := strings.Cut(name, ":"); ok {
		return m
	}
	return name
}
