package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
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
		panic("gateway: encode reply: " + err.Error())
	}
	return tool.Result{Content: []llm.Block{llm.Text(string(raw))}, IsError: isError, Meta: v}
}

func gatewayErr(status, format string, args ...any) tool.Result {
	return jsonResult(gatewayReply{Status: status, Error: fmt.Sprintf(format, args...)}, true)
}

// profile is the gateway profile of one Service.
type profile struct{ svc *subagent.Service }

// New is the gateway profile on svc (subagent.NewProfile).
func New(svc *subagent.Service) subagent.Profile { return &profile{svc: svc} }

// Tools are All of them for a caller that may spawn.
func (s *profile) Tools(c subagent.Caller) []tool.Tool {
	if !s.svc.MaySpawn(c) {
		return nil
	}
	return s.All(c)
}

// SpawnTool is sessions_spawn.
func (s *profile) SpawnTool() string { return "sessions_spawn" }

// ShellCalls are Claude Code's TaskOutput and TaskStop words: the gateway
// has no tools of its own for a background command.
func (s *profile) ShellCalls(id string) (output, stop string) {
	return fmt.Sprintf("TaskOutput with task_id %q (block: false to look without waiting; BashOutput with bash_id and a regex filter works too)", id),
		fmt.Sprintf("TaskStop with task_id %q", id)
}

// All are the gateway profile's tools for caller c, whatever c may spawn.
func (s *profile) All(c subagent.Caller) []tool.Tool {
	type row struct{ Name, Description string }
	var rows []row
	for _, d := range s.svc.CrossListed(c) {
		rows = append(rows, row{d.Name, prompt.OneLine(d.Description)})
	}
	spawn := subagent.CallerTool(s.svc, tool.Info{Name: "sessions_spawn", Description: profilePrompt("gateway_sessions_spawn.md", map[string]any{"Agents": rows}), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(ctx context.Context, env tool.Env, in SessionsSpawnInput) (tool.Result, error) {
			return s.sessionsSpawn(ctx, c, env, in), nil
		})
	spawn.TargetOf = func(_ tool.Env, in SessionsSpawnInput) string {
		if in.AgentID == "" {
			return "general-purpose"
		}
		return in.AgentID
	}
	list := subagent.CallerTool(s.svc, tool.Info{Name: "agents_list", Description: profilePrompt("gateway_agents_list.md", nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(context.Context, tool.Env, AgentsListInput) (tool.Result, error) {
			type entry struct {
				ID          string `json:"id"`
				Description string `json:"description"`
			}
			agents := []entry{}
			for _, d := range s.svc.CrossListed(c) {
				agents = append(agents, entry{d.Name, prompt.OneLine(d.Description)})
			}
			return jsonResult(struct {
				Requester string  `json:"requester"`
				Agents    []entry `json:"agents"`
			}{c.Agent, agents}, false), nil
		})
	return []tool.Tool{spawn, list}
}

func (s *profile) sessionsSpawn(ctx context.Context, c subagent.Caller, env tool.Env, in SessionsSpawnInput) tool.Result {
	if c.Depth+1 > s.svc.Depth() {
		return gatewayErr("forbidden", "sessions_spawn is not allowed here: maximum spawn depth exceeded (max=%d)", s.svc.Depth())
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
	def, ok := s.svc.Config().Agents.Get(agentID)
	if !ok {
		return gatewayErr("error", "unknown agentId %q; allowed: %s (agents_list shows them)", agentID, strings.Join(s.gatewayNames(c), ", "))
	}
	if !s.svc.CrossAllowed(c, def.Name) {
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
	out, err := s.svc.Spawn(ctx, c, subagent.SpawnRequest{
		ToolUseID: env.ToolUseID, Description: description(label, in.Task), Prompt: in.Task,
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
	warnings = append(out.Warnings(), warnings...)
	return jsonResult(gatewayReply{
		Status: "accepted", RunID: out.SessionID(),
		ChildSessionKey: "agent:" + out.Def().Name + ":subagent:" + out.SessionID(),
		Warning:         strings.Join(warnings, "; "),
	}, false)
}

// gatewayNames are the agents c may name, sorted, for error messages.
func (s *profile) gatewayNames(c subagent.Caller) []string {
	var names []string
	for _, d := range s.svc.CrossListed(c) {
		names = append(names, d.Name)
	}
	slices.Sort(names)
	return names
}

// description is a run's description (notifications, task lists): its
// label, else the start of its task — as the harness profile's.
func description(label, task string) string {
	if label != "" {
		return label
	}
	return prompt.Clip(task, 60)
}
