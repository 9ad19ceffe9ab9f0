package control

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre"
)

// Controls are the runtime's answers to the control requests beyond
// those every Conversation has: tasks, MCP, context, thinking, skills,
// settings. A Conversation that has none of them answers those requests
// as unsupported.
type Controls interface {
	StopTask(ctx context.Context, taskID string) error
	// Background moves the foreground subagent of that Agent call ("" for
	// all) to the background; false when toolUseID names none running.
	Background(toolUseID string) bool
	MCPStatus(ctx context.Context) []cadre.MCPServer
	ContextUsage() cadre.ContextUsage
	SetMaxThinkingTokens(budget *int64) error
	ReloadCommands() ([]cadre.SlashCommand, []string)
	AllowRules(rules ...string) error
}

// mcpStatusJSON is one entry of mcp_status's answer: the Agent SDK's
// McpServerStatus.
type mcpStatusJSON struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	Scope  string `json:"scope,omitempty"`
}

// sdkMCPStatus is cadre's server state in the SDK's set of words.
func sdkMCPStatus(s string) string {
	switch s {
	case "connected", "failed", "pending", "disabled":
		return s
	case "needs-approval":
		return "needs-auth"
	}
	return "failed"
}

// contextCategory is one row of get_context_usage's answer.
type contextCategory struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Tokens int64  `json:"tokens"`
	Color  string `json:"color"`
	Kind   string `json:"kind"`
}

type apiUsageJSON struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// contextUsageJSON is the SDK's SDKControlGetContextUsageResponse with
// the figures cadre has: what the last reply's request held, as one
// "messages" row (cadre does not count the system prompt, tools and
// messages apart), and the free space.
type contextUsageJSON struct {
	Categories           []contextCategory `json:"categories"`
	TotalTokens          int64             `json:"totalTokens"`
	MaxTokens            int64             `json:"maxTokens"`
	RawMaxTokens         int64             `json:"rawMaxTokens"`
	Percentage           int64             `json:"percentage"`
	GridRows             [][]any           `json:"gridRows"`
	Model                string            `json:"model"`
	MemoryFiles          []any             `json:"memoryFiles"`
	MCPTools             []any             `json:"mcpTools"`
	Agents               []any             `json:"agents"`
	IsAutoCompactEnabled bool              `json:"isAutoCompactEnabled"`
	APIUsage             *apiUsageJSON     `json:"apiUsage"`
}

func contextUsage(u cadre.ContextUsage) contextUsageJSON {
	free := max(u.Window-u.Tokens, 0)
	out := contextUsageJSON{
		Categories: []contextCategory{
			{ID: "messages", Name: "Messages", Tokens: u.Tokens, Color: "purple", Kind: "used"},
			{ID: "free_space", Name: "Free space", Tokens: free, Color: "gray", Kind: "free"},
		},
		TotalTokens: u.Tokens, MaxTokens: u.Window, RawMaxTokens: u.Window,
		GridRows: [][]any{}, Model: claudeModel(u.Model), MemoryFiles: []any{}, MCPTools: []any{}, Agents: []any{},
		IsAutoCompactEnabled: true,
	}
	if u.Window > 0 {
		out.Percentage = u.Tokens * 100 / u.Window
	}
	if r := u.LastReply; r != nil {
		out.APIUsage = &apiUsageJSON{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
			CacheCreationInputTokens: r.CacheCreationInputTokens, CacheReadInputTokens: r.CacheReadInputTokens}
	}
	return out
}

// claudeModel is an Anthropic model's bare id, as Claude Code names it.
func claudeModel(name string) string {
	if m, ok := strings.CutPrefix(name, "anthropic:"); ok {
		return m
	}
	return name
}

// flagSettings applies an apply_flag_settings request: the keys cadre can
// change in a running session. Any other key is an error naming it, and
// nothing is applied.
func (s *server) flagSettings(ctrl Controls, raw json.RawMessage) error {
	var r struct {
		Settings map[string]json.RawMessage `json:"settings"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("apply_flag_settings: %w", err)
	}
	var apply []func() error
	for key, v := range r.Settings {
		switch key {
		case "model":
			var m *string
			if err := json.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("apply_flag_settings: model: %w", err)
			}
			name := ""
			if m != nil && *m != "default" {
				name = *m
			}
			apply = append(apply, func() error { return s.conv.SetModel(name) })
		case "permissions":
			var p struct {
				Allow       []string `json:"allow"`
				DefaultMode string   `json:"defaultMode"`
			}
			var keys map[string]json.RawMessage
			if err := json.Unmarshal(v, &keys); err != nil {
				return fmt.Errorf("apply_flag_settings: permissions: %w", err)
			}
			for k := range keys {
				if k != "allow" && k != "defaultMode" {
					return fmt.Errorf("apply_flag_settings: permissions.%s cannot be changed in a running cadre session (allow and defaultMode can)", k)
				}
			}
			if err := json.Unmarshal(v, &p); err != nil {
				return fmt.Errorf("apply_flag_settings: permissions: %w", err)
			}
			if len(p.Allow) > 0 {
				apply = append(apply, func() error { return ctrl.AllowRules(p.Allow...) })
			}
			if p.DefaultMode != "" {
				apply = append(apply, func() error { return s.conv.SetPermissionMode(p.DefaultMode) })
			}
		default:
			return fmt.Errorf("apply_flag_settings: %q cannot be changed in a running cadre session (model and permissions.allow/defaultMode can)", key)
		}
	}
	for _, f := range apply {
		if err := f(); err != nil {
			return fmt.Errorf("apply_flag_settings: %w", err)
		}
	}
	return nil
}

// controlRequest answers the requests Controls serve; false when subtype
// is not one of them.
func (s *server) controlRequest(ctx context.Context, id, subtype string, raw json.RawMessage) bool {
	switch subtype {
	case "stop_task", "background_tasks", "mcp_status", "get_context_usage", "set_max_thinking_tokens",
		"reload_skills", "mcp_set_servers", "apply_flag_settings", "rewind_files":
	default:
		return false
	}
	if subtype == "rewind_files" {
		// cadre keeps no copies of the files its tools change, so there is
		// nothing to rewind to: the SDK's answer for a session without
		// file checkpointing, saying why.
		s.respond(id, map[string]any{"canRewind": false, "error": "cadre keeps no file checkpoints: rewinding files is not supported"})
		return true
	}
	if err := s.start(ctx, Init{}); err != nil {
		s.respondError(id, err.Error(), "")
		return true
	}
	ctrl, ok := s.conv.(Controls)
	if !ok {
		s.respondError(id, "Unsupported control request subtype: "+subtype, "unsupported_request")
		return true
	}
	var r struct {
		TaskID            string          `json:"task_id"`
		ToolUseID         string          `json:"tool_use_id"`
		MaxThinkingTokens *int64          `json:"max_thinking_tokens"`
		Servers           json.RawMessage `json:"servers"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		s.respondError(id, subtype+": "+err.Error(), "invalid_request")
		return true
	}
	switch subtype {
	case "stop_task":
		if r.TaskID == "" {
			s.respondError(id, "stop_task needs a task_id", "invalid_request")
			return true
		}
		if err := ctrl.StopTask(ctx, r.TaskID); err != nil {
			s.respondError(id, "stop_task: "+err.Error(), "")
			return true
		}
		s.respond(id, map[string]any{})
	case "background_tasks":
		s.respond(id, map[string]bool{"backgrounded": ctrl.Background(r.ToolUseID)})
	case "mcp_status":
		list := []mcpStatusJSON{}
		for _, m := range ctrl.MCPStatus(ctx) {
			list = append(list, mcpStatusJSON{Name: m.Name, Status: sdkMCPStatus(m.Status), Error: m.Error, Scope: m.Source})
		}
		s.respond(id, map[string]any{"mcpServers": list})
	case "get_context_usage":
		s.respond(id, contextUsage(ctrl.ContextUsage()))
	case "set_max_thinking_tokens":
		if err := ctrl.SetMaxThinkingTokens(r.MaxThinkingTokens); err != nil {
			s.respondError(id, "set_max_thinking_tokens: "+err.Error(), "invalid_request")
			return true
		}
		s.respond(id, map[string]any{})
	case "reload_skills":
		cmds, problems := ctrl.ReloadCommands()
		for _, p := range problems {
			s.warn(p)
		}
		list := []SlashCommand{}
		for _, c := range cmds {
			if c.Skill {
				list = append(list, SlashCommand{Name: c.Name, Description: c.Description, ArgumentHint: c.ArgumentHint})
			}
		}
		s.respond(id, map[string]any{"skills": list})
	case "mcp_set_servers":
		// cadre starts its MCP servers with the runtime and manages no
		// set that a session changes: an empty set changes nothing; each
		// server asked for is refused by name.
		var servers map[string]json.RawMessage
		if len(r.Servers) > 0 {
			if err := json.Unmarshal(r.Servers, &servers); err != nil {
				s.respondError(id, "mcp_set_servers: servers: "+err.Error(), "invalid_request")
				return true
			}
		}
		errs := map[string]string{}
		for name := range servers {
			errs[name] = "cadre does not add MCP servers to a running session: pass it with --mcp-config (the SDK's mcpServers option)"
		}
		s.respond(id, map[string]any{"added": []string{}, "removed": []string{}, "errors": errs})
	case "apply_flag_settings":
		if err := s.flagSettings(ctrl, raw); err != nil {
			s.respondError(id, err.Error(), "invalid_request")
			return true
		}
		s.respond(id, map[string]any{})
	}
	return true
}
