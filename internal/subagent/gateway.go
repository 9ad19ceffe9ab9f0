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
	for _, d := range s.gatewayListed(c) {
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
			for _, d := range s.gatewayListed(c) {
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
	def, ok := s.cfg.Agents.Get(agentID)
	if !ok {
		return gatewayErr("error", "unknown agentId %q; allowed: %s (agents_list shows them)", agentID, strings.Join(s.gatewayNames(c), ", "))
	}
	if !s.crossAllowed(c, def.Name) {
		return gatewayErr("forbidden", "agentId %q is not allowed for agent %q (allowAgents); allowed: %s (agents_list shows them)", def.Name, c.Agent, strings.Join(s.gatewayNames(c), ", "))
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
	out, err := s.Spawn(ctx, c, SpawnRequest{
		ToolUseID: env.ToolUseID, Description: harnessDescription(label, in.Task), Prompt: in.Task,
		SubagentType: agentID, Model: in.Model, Background: true, CrossAgent: true,
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

// allowAgents is the requester c's allowAgents list (S-P1): its
// definition's own when it has one, else the settings'.
func (s *Service) allowAgents(c Caller) []string {
	if d, ok := s.cfg.Agents.Get(c.Agent); ok && d.AllowAgents != nil {
		return d.AllowAgents
	}
	return s.cfg.Settings.AllowAgents
}

// crossAllowed reports whether c may name the agent as sessions_spawn's
// agentId (S-P1): its own agent and general-purpose (what no agentId
// starts) always; another agent only when allowAgents names it or holds
// "*". The task rules are checked after this, on every spawn.
func (s *Service) crossAllowed(c Caller, name string) bool {
	if strings.EqualFold(name, c.Agent) || strings.EqualFold(name, "general-purpose") {
		return true
	}
	for _, a := range s.allowAgents(c) {
		if a == "*" || strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// gatewayListed are the agents agents_list and sessions_spawn show c:
// what every spawn tool lists, less what allowAgents keeps c from naming.
func (s *Service) gatewayListed(c Caller) []agent.Definition {
	var out []agent.Definition
	for _, d := range s.Listed(c) {
		if s.crossAllowed(c, d.Name) {
			out = append(out, d)
		}
	}
	return out
}

// gatewayNames are gatewayListed's names, sorted, for error messages.
func (s *Service) gatewayNames(c Caller) []string { return sortedNames(s.gatewayListed(c)) }
