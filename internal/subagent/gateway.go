package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The gateway profile (DESIGN §12): OpenClaw's sessions_spawn, always
// non-blocking, and agents_list, with JSON replies.

// SessionsSpawnInput is sessions_spawn's input.
type SessionsSpawnInput struct {
	Task              string `json:"task" jsonschema:"The complete instructions for the sub-agent"`
	Label             string `json:"label,omitempty" jsonschema:"A short descriptive name for the run"`
	AgentID           string `json:"agentId,omitempty" jsonschema:"The agent to run (agents_list shows which are allowed); default general-purpose"`
	Model             string `json:"model,omitempty" jsonschema:"A model for this run; an unusable one is ignored with a warning"`
	Thinking          string `json:"thinking,omitempty" jsonschema:"A thinking level for this run"`
	RunTimeoutSeconds *int   `json:"runTimeoutSeconds,omitempty" jsonschema:"Abort the run after this many seconds (default 0: no limit)"`
	Cleanup           string `json:"cleanup,omitempty" jsonschema:"keep (default) or delete: archive the sub-agent's session right after its announcement"`
}

// AgentsListInput is agents_list's (empty) input.
type AgentsListInput struct{}

// gatewayReply is sessions_spawn's answer: accepted with the run's ids, or
// forbidden / error with the reason.
type gatewayReply struct {
	Status          string `json:"status"`
	RunID           string `json:"runId,omitempty"`
	ChildSessionKey string `json:"childSessionKey,omitempty"`
	Error           string `json:"error,omitempty"`
	Warning         string `json:"warning,omitempty"`
}

func jsonResult(v any, isError bool) tool.Result {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		// Only strings and slices of them: it cannot fail.
		panic("subagent: encode gateway reply: " + err.Error())
	}
	return tool.Result{Content: []llm.Block{llm.Text(string(raw))}, IsError: isError, Meta: v}
}

func gatewayErr(status, format string, args ...any) tool.Result {
	return jsonResult(gatewayReply{Status: status, Error: fmt.Sprintf(format, args...)}, true)
}

// gatewayTools are the gateway profile's tools for caller c.
func (s *Service) gatewayTools(c Caller) []tool.Tool {
	if c.Group == nil {
		c.Group = s.orphans
	}
	type row struct{ Name, Description string }
	var rows []row
	for _, d := range s.listed(c) {
		rows = append(rows, row{d.Name, oneLine(d.Description)})
	}
	spawn := protoTool(s, tool.Info{Name: "sessions_spawn", Description: profilePrompt("gateway_sessions_spawn.md", map[string]any{"Agents": rows}), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(ctx context.Context, env tool.Env, in SessionsSpawnInput) (tool.Result, error) {
			return s.sessionsSpawn(ctx, c, env, in), nil
		})
	spawn.TargetOf = func(_ tool.Env, in SessionsSpawnInput) string {
		if in.AgentID == "" {
			return "general-purpose"
		}
		return in.AgentID
	}
	list := protoTool(s, tool.Info{Name: "agents_list", Description: profilePrompt("gateway_agents_list.md", nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(context.Context, tool.Env, AgentsListInput) (tool.Result, error) {
			type entry struct {
				ID          string `json:"id"`
				Description string `json:"description"`
			}
			agents := []entry{}
			for _, d := range s.listed(c) {
				agents = append(agents, entry{d.Name, oneLine(d.Description)})
			}
			return jsonResult(struct {
				Requester string  `json:"requester"`
				Agents    []entry `json:"agents"`
			}{c.Agent, agents}, false), nil
		})
	return []tool.Tool{spawn, list}
}

func (s *Service) sessionsSpawn(ctx context.Context, c Caller, env tool.Env, in SessionsSpawnInput) tool.Result {
	if c.Depth+1 > s.depth {
		return gatewayErr("forbidden", "sessions_spawn is not allowed here: maximum spawn depth exceeded (max=%d)", s.depth)
	}
	if strings.TrimSpace(in.Task) == "" {
		return gatewayErr("error", "task is required: say what the sub-agent should do")
	}
	agentID := strings.TrimSpace(in.AgentID)
	if agentID == "" {
		agentID = "general-purpose"
	}
	if err := agent.ValidateName(agentID); err != nil {
		return gatewayErr("error", "invalid agentId: %v", err)
	}
	if _, ok := s.cfg.Agents.Get(agentID); !ok {
		var allowed []string
		for _, d := range s.listed(c) {
			allowed = append(allowed, d.Name)
		}
		return gatewayErr("error", "unknown agentId %q; allowed: %s (agents_list shows them)", agentID, strings.Join(allowed, ", "))
	}
	runTimeout := 0
	if in.RunTimeoutSeconds != nil {
		if *in.RunTimeoutSeconds < 0 {
			return gatewayErr("error", "runTimeoutSeconds must be 0 (no limit) or more, got %d", *in.RunTimeoutSeconds)
		}
		runTimeout = *in.RunTimeoutSeconds
	}
	switch in.Cleanup {
	case "", "keep", "delete":
	default:
		return gatewayErr("error", "cleanup must be keep or delete, got %q", in.Cleanup)
	}
	var warnings []string
	if t := strings.TrimSpace(in.Thinking); t != "" {
		warnings = append(warnings, fmt.Sprintf("thinking %q was not applied: per-run thinking levels are not supported yet", t))
	}
	label := strings.TrimSpace(in.Label)
	out, err := s.spawn(ctx, c, spawnRequest{
		ToolUseID: env.ToolUseID, Description: harnessDescription(label, in.Task), Prompt: in.Task,
		SubagentType: agentID, Model: in.Model, Background: true,
		RunTimeout: time.Duration(runTimeout) * time.Second, Cleanup: in.Cleanup,
	})
	if err != nil {
		if denied := (*permission.Denied)(nil); errors.As(err, &denied) {
			return gatewayErr("forbidden", "%v", err)
		}
		return gatewayErr("error", "%v", err)
	}
	// A model that cannot be used is ignored with a warning (the gateway
	// rule): the run goes on with the next model of the chain.
	warnings = append(out.warnings, warnings...)
	return jsonResult(gatewayReply{
		Status: "accepted", RunID: out.sessionID,
		ChildSessionKey: "agent:" + out.def.Name + ":subagent:" + out.sessionID,
		Warning:         strings.Join(warnings, "; "),
	}, false)
}
