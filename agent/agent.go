package agent

import "github.com/cadre-dev/cadre/event"

// Definition is a subagent definition (see docs/agents.md): a named role with
// its own prompt, tools, model, permission mode and limits. Declare agents
// in the SDK's Options.Agents; its Runtime.Agents lists every definition cadre found,
// files included. Empty fields mean "not set": inherit or take the default.
type Definition struct {
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
	PermissionMode event.PermissionMode
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
	// Mode says who may use the definition: "" means ModeAll.
	Mode Mode
	// Workspace, if set, is the agent's workspace; nil takes the format's
	// default (shared for SDK declarations, isolated for the harness).
	Workspace *Workspace
	// TaskRules decide which agents this one may start, in order (the last
	// match wins).
	TaskRules []TaskRule
	// Allow, Ask and Deny are permission rules in Claude Code syntax
	// ("Bash(git *)", "Edit") that apply to this agent's runs.
	Allow, Ask, Deny []string
	// Format is the format the definition was written in. A declaration
	// leaves it empty, or sets FormatHarness to get the harness
	// defaults (isolated workspace, 10 turns when MaxTurns is 0).
	Format Format
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

// Mode says whether a definition is a subagent, a main agent, or both.
type Mode string

// Modes.
const (
	ModeAll      Mode = "all"
	ModePrimary  Mode = "primary"
	ModeSubagent Mode = "subagent"
)

// Workspace is a definition's workspace.
type Workspace struct {
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

// Format is the format a definition was written in.
type Format string

// Formats.
const (
	FormatClaude   Format = "claude"   // Claude Code's agent files
	FormatOpenCode Format = "opencode" // OpenCode's agent files
	FormatHarness  Format = "harness"  // the harness's workspace/subagents files
	FormatJSON     Format = "json"     // the settings' "agents" object
	FormatSDK      Format = "sdk"      // Options.Agents and AgentFactories
	FormatBuiltin  Format = "builtin"  // compiled into cadre
)

// Source is where a definition came from. Later sources win by name,
// in the order of the constants.
type Source string

// Sources.
const (
	SourceBuiltin  Source = "built-in"
	SourceUser     Source = "user"
	SourceProject  Source = "project"
	SourceSettings Source = "settings"
	SourceSDK      Source = "sdk"
)

// Entry is one definition cadre found, for listings: where it came
// from, whether it is in effect, and why not.
type Entry struct {
	Agent  Definition
	Source Source
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
