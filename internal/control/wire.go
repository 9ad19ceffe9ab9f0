package control

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cadre-dev/cadre"
)

// envelope is any input line: its type says what the rest is.
type envelope struct {
	Type      string          `json:"type"`
	RequestID string          `json:"request_id,omitempty"`
	Request   json.RawMessage `json:"request,omitempty"`
	Response  *responseBody   `json:"response,omitempty"`
	Message   json.RawMessage `json:"message,omitempty"`
	UUID      string          `json:"uuid,omitempty"`
	// ParentToolUseID on a user line is accepted and ignored: a program
	// talks to the main agent.
	ParentToolUseID *string `json:"parent_tool_use_id,omitempty"`
}

// requestHead is the part of every control request that says which it is.
type requestHead struct {
	Subtype string `json:"subtype"`
}

// responseBody is the inner object of a control_response, either way.
type responseBody struct {
	Subtype   string          `json:"subtype"` // success or error
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response,omitempty"`
	Error     string          `json:"error,omitempty"`
	ErrorCode string          `json:"error_code,omitempty"`
}

// controlResponse and controlRequest are the lines cadre writes.
type controlResponse struct {
	Type     string       `json:"type"` // control_response
	Response responseBody `json:"response"`
}

type controlRequest struct {
	Type      string `json:"type"` // control_request
	RequestID string `json:"request_id"`
	Request   any    `json:"request"`
}

// userReplay is the echo of a user line (--replay-user-messages), in
// Claude Code's shape: parent_tool_use_id is always null.
type userReplay struct {
	Type            string        `json:"type"` // user
	Message         replayMessage `json:"message"`
	SessionID       string        `json:"session_id"`
	ParentToolUseID *string       `json:"parent_tool_use_id"`
	UUID            string        `json:"uuid"`
	Timestamp       string        `json:"timestamp"`
	IsReplay        bool          `json:"isReplay"`
}

type replayMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Input is one user message from the program.
type Input struct {
	// Text is the message when its content is a string, or the
	// concatenated text blocks when it is a list.
	Text string
	// Blocks is the content when it was a list of blocks (text, image),
	// as the program sent them.
	Blocks []json.RawMessage
	// UUID is the program's id for the message, if it gave one.
	UUID string
}

// parseUser reads a user line's message: {"role":"user","content": string | [blocks]}.
func parseUser(env envelope) (Input, error) {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(env.Message) == 0 {
		return Input{}, errors.New(`user line has no "message"`)
	}
	if err := json.Unmarshal(env.Message, &m); err != nil {
		return Input{}, fmt.Errorf("user message: %w", err)
	}
	if m.Role != "" && m.Role != "user" {
		return Input{}, fmt.Errorf("user message has role %q, want \"user\"", m.Role)
	}
	in := Input{UUID: env.UUID}
	c := bytes.TrimSpace(m.Content)
	switch {
	case len(c) == 0 || bytes.Equal(c, []byte("null")):
		return Input{}, errors.New("user message has no content")
	case c[0] == '"':
		if err := json.Unmarshal(c, &in.Text); err != nil {
			return Input{}, fmt.Errorf("user message content: %w", err)
		}
	case c[0] == '[':
		var blocks []json.RawMessage
		if err := json.Unmarshal(c, &blocks); err != nil {
			return Input{}, fmt.Errorf("user message content: %w", err)
		}
		var text []byte
		for i, b := range blocks {
			var head struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(b, &head); err != nil {
				return Input{}, fmt.Errorf("user message content block %d: %w", i, err)
			}
			switch head.Type {
			case "text":
				if len(text) > 0 {
					text = append(text, '\n')
				}
				text = append(text, head.Text...)
			case "image":
			default:
				return Input{}, fmt.Errorf("user message content block %d has type %q: only text and image blocks are taken", i, head.Type)
			}
		}
		in.Text, in.Blocks = string(text), blocks
	default:
		return Input{}, errors.New("user message content is neither a string nor a list of blocks")
	}
	return in, nil
}

// Init is what an initialize request asks for, in cadre's terms.
type Init struct {
	// SystemPrompt is nil when the program asked for the default (the
	// claude_code preset): cadre's full prompt. Otherwise its parts
	// joined; the SDK's default [""] is the empty, minimal prompt.
	SystemPrompt       *string
	AppendSystemPrompt string
	// Agents are subagents the program defines, by name.
	Agents map[string]AgentDefinition
	// Hooks are the program's hook callbacks, by event.
	Hooks map[string][]HookMatcher
	// ForwardSubagentText forwards subagents' text and thinking blocks;
	// without it only their tool_use and tool_result blocks are written.
	ForwardSubagentText bool
	// JSONSchema asks for structured output (the SDK's outputFormat).
	JSONSchema json.RawMessage
}

// initializeRequest is the SDK's initialize, the fields cadre reads.
type initializeRequest struct {
	Hooks               map[string][]HookMatcher   `json:"hooks"`
	SystemPrompt        []string                   `json:"systemPrompt"`
	AppendSystemPrompt  string                     `json:"appendSystemPrompt"`
	Agents              map[string]AgentDefinition `json:"agents"`
	ForwardSubagentText bool                       `json:"forwardSubagentText"`
	JSONSchema          json.RawMessage            `json:"jsonSchema"`
}

func (r initializeRequest) init() Init {
	in := Init{
		AppendSystemPrompt: r.AppendSystemPrompt, Agents: r.Agents, Hooks: r.Hooks,
		ForwardSubagentText: r.ForwardSubagentText, JSONSchema: r.JSONSchema,
	}
	if r.SystemPrompt != nil {
		s := joinNonEmpty(r.SystemPrompt)
		in.SystemPrompt = &s
	}
	return in
}

func joinNonEmpty(parts []string) string {
	var b []byte
	for _, p := range parts {
		if p == "" {
			continue
		}
		if len(b) > 0 {
			b = append(b, "\n\n"...)
		}
		b = append(b, p...)
	}
	return string(b)
}

// AgentDefinition is the SDK's AgentDefinition: a subagent defined by the
// program.
type AgentDefinition struct {
	Description     string   `json:"description"`
	Prompt          string   `json:"prompt"`
	Tools           []string `json:"tools,omitempty"`
	DisallowedTools []string `json:"disallowedTools,omitempty"`
	Model           string   `json:"model,omitempty"`
	MaxTurns        int      `json:"maxTurns,omitempty"`
	Background      bool     `json:"background,omitempty"`
	PermissionMode  string   `json:"permissionMode,omitempty"`
	Skills          []string `json:"skills,omitempty"`
}

// HookMatcher is one matcher of the program's hooks: the callbacks are
// named by ids the program chose; cadre calls them with hook_callback.
type HookMatcher struct {
	Matcher         string   `json:"matcher,omitempty"`
	HookCallbackIDs []string `json:"hookCallbackIds"`
	// Timeout in seconds, as Claude Code's hook timeouts.
	Timeout   float64 `json:"timeout,omitempty"`
	OnFailure string  `json:"onFailure,omitempty"`
}

// InitInfo is what an initialize is answered with, besides what Serve
// fills in itself.
type InitInfo struct {
	Commands []SlashCommand `json:"commands"`
	Agents   []AgentInfo    `json:"agents"`
	Models   []ModelInfo    `json:"models"`
	// PermissionMode is the session's mode now.
	PermissionMode string `json:"current_permission_mode,omitempty"`
	// Version is cadre's, in the field Claude Code gives its own.
	Version string `json:"claude_code_version,omitempty"`
	// APIKeySource is from the SDK's set.
	APIKeySource string `json:"-"`
}

// SlashCommand, AgentInfo and ModelInfo are the SDK's types of the same
// names.
type SlashCommand struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	ArgumentHint string `json:"argumentHint"`
}

type AgentInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Model       string `json:"model,omitempty"`
}

type ModelInfo struct {
	Value         string `json:"value"`
	ResolvedModel string `json:"resolvedModel,omitempty"`
	DisplayName   string `json:"displayName"`
	Description   string `json:"description"`
}

// initializeResponse is the answer to initialize, shaped as Claude Code's.
type initializeResponse struct {
	InitInfo
	OutputStyle           string      `json:"output_style"`
	AvailableOutputStyles []string    `json:"available_output_styles"`
	Account               accountInfo `json:"account"`
	PID                   int         `json:"pid"`
	HooksApplied          *bool       `json:"hooks_applied,omitempty"`
	// HookOnFailureSupported says cadre honours onFailure: "block".
	HookOnFailureSupported bool `json:"hook_on_failure_supported"`
	AnalyticsDisabled      bool `json:"analytics_disabled"`
}

// accountInfo is account-free: cadre has no login.
type accountInfo struct {
	TokenSource  string `json:"tokenSource"`
	APIKeySource string `json:"apiKeySource"`
}

// Ask is a permission question cadre puts to the program (can_use_tool).
type Ask struct {
	Tool      string
	Input     json.RawMessage
	ToolUseID string
	// Description says what the call does, as the model described it.
	Description string
	// BlockedPath is the path the call touches, when there is one.
	BlockedPath string
	// Reason says why the call asks.
	Reason string
	// Suggestions are allow rules (permission-rule syntax) that "always
	// allow" would add.
	Suggestions []string
	// ExactRules approve this very call; Claude Code suggests saving
	// them to the project's local settings.
	ExactRules []string
	// Edits says accepting edits (acceptEdits) would approve the call.
	Edits bool
	// AgentID and ParentToolUseID are set when a subagent asks: its
	// session id and the Agent call that started it.
	AgentID, ParentToolUseID string
	// Agent names the asking agent ("main" or the subagent's type).
	Agent string
	// Diff is the unified diff an edit would make (Edit, Write), "" for
	// other calls.
	Diff string
}

// Answer is the program's decision (the SDK's PermissionResult).
type Answer struct {
	Allow bool
	// UpdatedInput replaces the call's input (allow).
	UpdatedInput json.RawMessage
	// Message tells the model why not (deny).
	Message string
	// Interrupt also stops the turn (deny).
	Interrupt bool
	// Remember are allow rules for the rest of the session (the answer's
	// updatedPermissions of type addRules, behavior allow, destination
	// session).
	Remember []string
	// Save are the other addRules updates, for settings files.
	Save []cadre.RuleUpdate
	// Mode is the permission mode a setMode update asks for ("" for none).
	Mode string
	// Ignored names the updates cadre does not apply.
	Ignored []string
}

// permissionRequest is can_use_tool on the wire.
type permissionRequest struct {
	Subtype              string             `json:"subtype"` // can_use_tool
	ToolName             string             `json:"tool_name"`
	DisplayName          string             `json:"display_name,omitempty"`
	Input                json.RawMessage    `json:"input"`
	Description          string             `json:"description,omitempty"`
	PermissionSuggestion []permissionUpdate `json:"permission_suggestions,omitempty"`
	BlockedPath          string             `json:"blocked_path,omitempty"`
	DecisionReason       string             `json:"decision_reason,omitempty"`
	ToolUseID            string             `json:"tool_use_id"`
	AgentID              string             `json:"agent_id,omitempty"`
	ParentToolUseID      string             `json:"parent_tool_use_id,omitempty"`
	AgentType            string             `json:"agent_type,omitempty"`
	// Diff is cadre's: the unified diff an Edit or Write would make, so
	// that a program need not recompute it.
	Diff string `json:"diff,omitempty"`
}

// permissionUpdate is the SDK's PermissionUpdate: addRules (rules,
// behavior), setMode (mode) or addDirectories (directories).
type permissionUpdate struct {
	Type        string      `json:"type"`
	Rules       []ruleValue `json:"rules,omitempty"`
	Behavior    string      `json:"behavior,omitempty"`
	Mode        string      `json:"mode,omitempty"`
	Directories []string    `json:"directories,omitempty"`
	Destination string      `json:"destination"`
}

type ruleValue struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

// permissionResult is the SDK's PermissionResult.
type permissionResult struct {
	Behavior           string             `json:"behavior"`
	UpdatedInput       json.RawMessage    `json:"updatedInput"`
	UpdatedPermissions []permissionUpdate `json:"updatedPermissions"`
	Message            string             `json:"message"`
	Interrupt          bool               `json:"interrupt"`
}

func (r permissionResult) answer() (Answer, error) {
	switch r.Behavior {
	case "allow":
		a := Answer{Allow: true}
		if len(r.UpdatedInput) > 0 && !bytes.Equal(bytes.TrimSpace(r.UpdatedInput), []byte("null")) {
			a.UpdatedInput = r.UpdatedInput
		}
		for _, u := range r.UpdatedPermissions {
			switch {
			case u.Type == "addRules" && u.Behavior == "allow" && u.Destination == string(cadre.RulesSession):
				for _, rv := range u.Rules {
					a.Remember = append(a.Remember, rv.rule())
				}
			case u.Type == "addRules":
				su := cadre.RuleUpdate{Destination: cadre.RuleDestination(u.Destination), Behavior: u.Behavior}
				for _, rv := range u.Rules {
					su.Rules = append(su.Rules, rv.rule())
				}
				a.Save = append(a.Save, su)
			case u.Type == "setMode" && u.Destination == string(cadre.RulesSession):
				a.Mode = u.Mode
			default:
				// addDirectories, replaceRules, removeRules and a saved
				// mode: cadre applies none of them (docs/sdk.md), and
				// says so rather than refuse the approved call.
				a.Ignored = append(a.Ignored, u.Type+" ("+u.Destination+")")
			}
		}
		return a, nil
	case "deny":
		return Answer{Message: r.Message, Interrupt: r.Interrupt}, nil
	}
	return Answer{}, fmt.Errorf("permission answer has behavior %q, want allow or deny", r.Behavior)
}

func (v ruleValue) rule() string {
	if v.RuleContent == "" {
		return v.ToolName
	}
	return v.ToolName + "(" + v.RuleContent + ")"
}

// suggestion turns a rule in permission-rule syntax into the SDK's shape.
func suggestion(rule string) ruleValue {
	if i := bytes.IndexByte([]byte(rule), '('); i > 0 && rule[len(rule)-1] == ')' {
		return ruleValue{ToolName: rule[:i], RuleContent: rule[i+1 : len(rule)-1]}
	}
	return ruleValue{ToolName: rule}
}

// hookCallbackRequest is hook_callback on the wire.
type hookCallbackRequest struct {
	Subtype    string          `json:"subtype"` // hook_callback
	CallbackID string          `json:"callback_id"`
	Input      json.RawMessage `json:"input"`
	ToolUseID  string          `json:"tool_use_id,omitempty"`
}
