package control

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/cadre-dev/cadre"
)

// minimalPrompt is the system prompt when the program asks for none of
// its own and not for the claude_code preset: the Agent SDK's default.
//
//go:embed minimal.md
var minimalPrompt string

// RunConfig is what a stream-json run needs from the command line.
type RunConfig struct {
	// Options come from the flags; the initialize request adds to them.
	Options cadre.Options
	// Resume and Continue pick the session, as for -p.
	Resume   string
	Continue bool
	// SessionID names a new session; Fork continues a resumed one in a
	// copy; NoPersist keeps it in memory only.
	SessionID string
	Fork      bool
	NoPersist bool
	// PermissionPromptTool "stdio" asks the program (can_use_tool) when a
	// call would ask; "" denies such calls, as a headless run does.
	PermissionPromptTool string
	Verbose              bool
	// ReplayUserMessages echoes each user line read (--replay-user-messages).
	ReplayUserMessages bool
	In                 io.Reader
	Out                io.Writer
	// Warn reports problems that do not stop the run.
	Warn func(string)
}

// Run serves one stream-json session on rc's pipes with a cadre Runtime
// opened when the program initializes (or sends its first message).
func Run(ctx context.Context, rc RunConfig) error {
	warn := rc.Warn
	if warn == nil {
		warn = func(string) {}
	}
	switch rc.PermissionPromptTool {
	case "", "stdio":
	default:
		warn(fmt.Sprintf("--permission-prompt-tool %s: only stdio is supported; calls that would ask are denied", rc.PermissionPromptTool))
	}
	var rt *cadre.Runtime
	defer func() {
		if rt != nil {
			rt.Close()
		}
	}()
	start := func(ctx context.Context, init Init, peer Peer) (Conversation, InitInfo, error) {
		opts, err := options(rc, init, peer, warn)
		if err != nil {
			return nil, InitInfo{}, err
		}
		rt, err = cadre.New(ctx, opts)
		if err != nil {
			return nil, InitInfo{}, err
		}
		for _, w := range rt.Warnings() {
			warn(w)
		}
		conv, err := open(ctx, rt, rc)
		if err != nil {
			return nil, InitInfo{}, err
		}
		return conv, initInfo(rt, opts), nil
	}
	return Serve(ctx, Config{In: rc.In, Out: rc.Out, Verbose: rc.Verbose, ReplayUserMessages: rc.ReplayUserMessages, Start: start, Warn: warn})
}

// options adds what the program asked for in initialize to the flags'.
func options(rc RunConfig, init Init, peer Peer, warn func(string)) (cadre.Options, error) {
	opts := rc.Options
	if init.SystemPrompt != nil {
		opts.SystemPrompt = *init.SystemPrompt
		if opts.SystemPrompt == "" {
			opts.SystemPrompt = minimalPrompt
		}
	}
	if init.AppendSystemPrompt != "" {
		opts.AppendSystemPrompt = strings.TrimSpace(opts.AppendSystemPrompt + "\n\n" + init.AppendSystemPrompt)
	}
	names := make([]string, 0, len(init.Agents))
	for name := range init.Agents {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		opts.Agents = append(opts.Agents, agentOf(name, init.Agents[name]))
	}
	if h := hooks(init.Hooks, peer, warn); len(h) > 0 {
		merged := map[cadre.HookEvent][]cadre.HookMatcher{}
		for ev, ms := range opts.Hooks {
			merged[ev] = append(merged[ev], ms...)
		}
		for ev, ms := range h {
			merged[ev] = append(merged[ev], ms...)
		}
		opts.Hooks = merged
	}
	if rc.PermissionPromptTool == "stdio" {
		opts.Permission = permissionFunc(peer)
	}
	return opts, nil
}

// agentOf is a program's AgentDefinition as a cadre Agent, with the
// meaning an agent file's fields have.
func agentOf(name string, d AgentDefinition) cadre.Agent {
	return cadre.Agent{
		Name: name, Description: d.Description, Prompt: d.Prompt,
		Tools: d.Tools, DisallowedTools: d.DisallowedTools, Model: d.Model,
		MaxTurns: d.MaxTurns, Background: d.Background, PermissionMode: cadre.PermissionMode(d.PermissionMode),
	}
}

// initInfo is what initialize is answered with: the runtime's commands and
// agents, the models a program can name.
func initInfo(rt *cadre.Runtime, opts cadre.Options) InitInfo {
	info := InitInfo{Version: cadre.Version(), APIKeySource: apiKeySource(opts)}
	for _, c := range rt.Commands() {
		info.Commands = append(info.Commands, SlashCommand{Name: c.Name, Description: c.Description, ArgumentHint: c.ArgumentHint})
	}
	for _, e := range rt.Agents() {
		if !e.Active || e.Agent.Hidden {
			continue
		}
		info.Agents = append(info.Agents, AgentInfo{Name: e.Agent.Name, Description: e.Agent.Description, Model: e.Agent.Model})
	}
	info.Models = models
	mode := string(opts.PermissionMode)
	if mode == "" {
		mode = string(cadre.PermissionDefault)
	}
	info.PermissionMode = mode
	return info
}

// models are the names a program can pass to set_model besides any
// provider:model: the aliases cadre resolves (docs/models.md).
var models = []ModelInfo{
	{Value: "default", DisplayName: "Default", Description: "The model of the settings or --model"},
	{Value: "sonnet", DisplayName: "Sonnet", Description: "Anthropic's Sonnet"},
	{Value: "opus", DisplayName: "Opus", Description: "Anthropic's Opus"},
	{Value: "haiku", DisplayName: "Haiku", Description: "Anthropic's Haiku"},
}

// apiKeySource names where the provider key comes from, in the SDK's set.
func apiKeySource(opts cadre.Options) string {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if getenv("ANTHROPIC_API_KEY") != "" {
		return "ANTHROPIC_API_KEY"
	}
	return "none"
}

// diffOf is a change's unified diff, "" without one.
func diffOf(c *cadre.FileChange) string {
	if c == nil {
		return ""
	}
	return c.Diff
}

// permissionFunc asks the program.
func permissionFunc(peer Peer) cadre.PermissionFunc {
	return func(ctx context.Context, req cadre.PermissionRequest) (cadre.PermissionDecision, error) {
		ans, err := peer.Ask(ctx, Ask{
			Tool: req.Tool, Input: req.Input, ToolUseID: req.ToolUseID, Reason: req.Reason,
			BlockedPath: blockedPath(req), Description: description(req.Input),
			Suggestions: req.Suggestions, ExactRules: req.ExactRules, Edits: req.Edits,
			Agent: req.Agent, AgentID: req.AgentID, ParentToolUseID: req.ParentToolUseID,
			Diff: diffOf(req.Change),
		})
		if err != nil {
			return cadre.PermissionDecision{}, err
		}
		return cadre.PermissionDecision{
			Allow: ans.Allow, UpdatedInput: ans.UpdatedInput, Message: ans.Message, Interrupt: ans.Interrupt,
			Remember: ans.Remember, Save: ans.Save,
		}, nil
	}
}

// blockedPath is the path a file tool's call touches.
func blockedPath(req cadre.PermissionRequest) string {
	if req.Tool == "Bash" {
		return ""
	}
	return req.Target
}

// description is the model's own description of a call, when its input
// has one (Bash, Agent).
func description(input json.RawMessage) string {
	var in struct {
		Description string `json:"description"`
	}
	_ = json.Unmarshal(input, &in)
	return in.Description
}
