package cadre

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cadre-dev/cadre/internal/agent"
)

// Agent is a subagent definition (see docs/agents.md): a named role with
// its own prompt, tools, model, permission mode and limits. Declare agents
// in Options.Agents; Runtime.Agents lists every definition cadre found,
// files included. Empty fields mean "not set": inherit or take the default.
type Agent struct {
	// Name is the agent id: [a-z0-9][a-z0-9_-]{0,63}, case ignored.
	Name string
	// Description tells the parent model when to use the agent; required.
	Description string
	// Prompt is the agent's system prompt.
	Prompt string
	// Tools is the allowlist: nil means every available tool, an empty
	// non-nil slice none. DisallowedTools are taken away from it.
	Tools, DisallowedTools []string
	// Model is "" (the default chain: subagents.model, then the parent's),
	// "inherit", an alias (sonnet, opus, haiku) or provider:model.
	Model string
	// PermissionMode is "" (acceptEdits, capped by the parent's) or a mode.
	PermissionMode PermissionMode
	// Background runs every call of the agent in the background.
	Background bool
	// Isolation runs the agent in a git worktree of its own
	// (IsolationWorktree), or says it is remote (IsolationRemote, with URL).
	Isolation Isolation
	// MaxTurns bounds a run; 0 means the run's own limit.
	MaxTurns int
	// Hidden agents are left out of the Agent tool's listing but stay
	// callable.
	Hidden bool
	// Mode says who may use the definition: "" means AgentModeAll.
	Mode AgentMode
	// Workspace, if set, is the agent's workspace; nil takes the format's
	// default (shared for SDK declarations, isolated for the harness).
	Workspace *AgentWorkspace
	// TaskRules decide which agents this one may start, in order (the last
	// match wins).
	TaskRules []TaskRule
	// Allow, Ask and Deny are permission rules in Claude Code syntax
	// ("Bash(git *)", "Edit") that apply to this agent's runs.
	Allow, Ask, Deny []string
	// Format is the format the definition was written in. A declaration
	// leaves it empty, or sets AgentFormatHarness to get the harness
	// defaults (isolated workspace, 10 turns when MaxTurns is 0).
	Format AgentFormat
	// URL declares a remote agent (an absolute http or https URL, its A2A
	// agent card at URL/.well-known/agent-card.json): the subagent runs on
	// that server, reached over A2A (docs/a2a.md). Headers are sent with
	// each request to that origin (auth).
	URL     string
	Headers map[string]string
}

// Isolation is where a subagent works.
type Isolation string

// Isolations.
const (
	// IsolationWorktree gives each run of the agent a git worktree of its
	// own.
	IsolationWorktree Isolation = "worktree"
	// IsolationRemote runs the agent on the A2A server of its URL (which
	// it needs; a URL alone says the same).
	IsolationRemote Isolation = "remote"
)

// AgentMode says whether a definition is a subagent, a main agent, or both.
type AgentMode string

// Agent modes.
const (
	AgentModeAll      AgentMode = "all"
	AgentModePrimary  AgentMode = "primary"
	AgentModeSubagent AgentMode = "subagent"
)

// AgentWorkspace is a definition's workspace.
type AgentWorkspace struct {
	Mode WorkspaceMode
	// Path is a definition workspace: a directory whose AGENTS.md is the
	// prompt base (so Prompt must be empty). Relative paths resolve
	// against the runtime's working directory.
	Path string
}

// WorkspaceMode says whether a subagent shares its parent's workspace.
type WorkspaceMode string

// Workspace modes.
const (
	WorkspaceIsolated WorkspaceMode = "isolated"
	WorkspaceShared   WorkspaceMode = "shared"
)

// TaskRule is one rule on which agents an agent may start: agent names
// matching Pattern (a glob) get Action.
type TaskRule struct {
	Pattern string
	Action  RuleAction
}

// RuleAction is what a rule decides.
type RuleAction string

// Rule actions.
const (
	RuleAllow RuleAction = "allow"
	RuleAsk   RuleAction = "ask"
	RuleDeny  RuleAction = "deny"
)

// AgentFormat is the format a definition was written in.
type AgentFormat string

// Agent formats.
const (
	AgentFormatClaude   AgentFormat = "claude"   // Claude Code's agent files
	AgentFormatOpenCode AgentFormat = "opencode" // OpenCode's agent files
	AgentFormatHarness  AgentFormat = "harness"  // the harness's workspace/subagents files
	AgentFormatJSON     AgentFormat = "json"     // the settings' "agents" object
	AgentFormatSDK      AgentFormat = "sdk"      // Options.Agents and AgentFactories
	AgentFormatBuiltin  AgentFormat = "builtin"  // compiled into cadre
)

// AgentSource is where a definition came from. Later sources win by name,
// in the order of the constants.
type AgentSource string

// Agent sources.
const (
	AgentSourceBuiltin  AgentSource = "built-in"
	AgentSourceUser     AgentSource = "user"
	AgentSourceProject  AgentSource = "project"
	AgentSourceSettings AgentSource = "settings"
	AgentSourceSDK      AgentSource = "sdk"
)

// AgentEntry is one definition cadre found, for listings: where it came
// from, whether it is in effect, and why not.
type AgentEntry struct {
	Agent  Agent
	Source AgentSource
	// Path and Line locate the file that declared it ("" for built-in and
	// SDK definitions; the settings file for settings).
	Path string
	Line int
	// Warnings are non-fatal findings, each prefixed with its location.
	Warnings []string
	// Active is true for the definition in effect for its name.
	Active bool
	// ShadowedBy names where the active definition of the same name came
	// from, when this valid one lost to it.
	ShadowedBy string
	// Err says why the definition is invalid (it was not loaded).
	Err error
}

// definition converts a declaration for the registry, which validates it.
func (a Agent) definition() agent.Definition {
	d := agent.Definition{
		Name: a.Name, Description: a.Description, Prompt: a.Prompt,
		Tools: slices.Clone(a.Tools), DisallowedTools: slices.Clone(a.DisallowedTools),
		Model: a.Model, PermissionMode: string(a.PermissionMode), Background: a.Background,
		Isolation: string(a.Isolation), MaxTurns: a.MaxTurns, Hidden: a.Hidden, Mode: string(a.Mode),
		Allow: slices.Clone(a.Allow), Ask: slices.Clone(a.Ask), Deny: slices.Clone(a.Deny),
		Format: agent.Format(a.Format), URL: a.URL, Headers: maps.Clone(a.Headers),
	}
	if a.Workspace != nil {
		d.Workspace = &agent.Workspace{Mode: string(a.Workspace.Mode), Path: a.Workspace.Path}
	}
	for _, r := range a.TaskRules {
		d.TaskRules = append(d.TaskRules, agent.TaskRule{Pattern: r.Pattern, Action: string(r.Action)})
	}
	return d
}

// agentOf converts a registry definition for SDK users.
func agentOf(d agent.Definition) Agent {
	a := Agent{
		Name: d.Name, Description: d.Description, Prompt: d.Prompt,
		Tools: slices.Clone(d.Tools), DisallowedTools: slices.Clone(d.DisallowedTools),
		Model: d.Model, PermissionMode: PermissionMode(d.PermissionMode), Background: d.Background,
		Isolation: Isolation(d.Isolation), MaxTurns: d.MaxTurns, Hidden: d.Hidden, Mode: AgentMode(d.Mode),
		Allow: slices.Clone(d.Allow), Ask: slices.Clone(d.Ask), Deny: slices.Clone(d.Deny),
		Format: AgentFormat(d.Format), URL: d.URL, Headers: maps.Clone(d.Headers),
	}
	if d.Workspace != nil {
		a.Workspace = &AgentWorkspace{Mode: WorkspaceMode(d.Workspace.Mode), Path: d.Workspace.Path}
	}
	for _, r := range d.TaskRules {
		a.TaskRules = append(a.TaskRules, TaskRule{Pattern: r.Pattern, Action: RuleAction(r.Action)})
	}
	return a
}

func agentEntryOf(e agent.Entry) AgentEntry {
	return AgentEntry{
		Agent: agentOf(e.Definition), Source: AgentSource(e.Definition.Source),
		Path: e.Definition.Path, Line: e.Definition.Line, Warnings: slices.Clone(e.Definition.Warnings),
		Active: e.Active, ShadowedBy: e.ShadowedBy, Err: e.Err,
	}
}

// declarations converts Options.Agents and AgentFactories for the
// registry. A Format other than the two a declaration may carry is
// refused here; the registry checks the rest.
func declarations(opts Options) ([]agent.Definition, []func() ([]agent.Definition, error), error) {
	var errs []error
	var defs []agent.Definition
	for i, a := range opts.Agents {
		if err := a.checkFormat(); err != nil {
			errs = append(errs, fmt.Errorf("Options.Agents[%d]: %w", i, err))
		}
		defs = append(defs, a.definition())
	}
	var factories []func() ([]agent.Definition, error)
	for i, f := range opts.AgentFactories {
		if f == nil {
			errs = append(errs, fmt.Errorf("Options.AgentFactories[%d] is nil", i))
			continue
		}
		factories = append(factories, func() ([]agent.Definition, error) {
			as, err := f()
			if err != nil {
				return nil, err
			}
			out := make([]agent.Definition, len(as))
			for j, a := range as {
				if err := a.checkFormat(); err != nil {
					return nil, fmt.Errorf("definition %d: %w", j+1, err)
				}
				out[j] = a.definition()
			}
			return out, nil
		})
	}
	return defs, factories, errors.Join(errs...)
}

func (a Agent) checkFormat() error {
	switch a.Format {
	case "", AgentFormatSDK, AgentFormatHarness:
		return nil
	}
	return fmt.Errorf("agent %q: Format: %q is not for declarations: want %q or %q", a.Name, a.Format, AgentFormatSDK, AgentFormatHarness)
}
