package cadre

import "github.com/cadre-dev/cadre/agent"

// Subagent definitions (package agent), under the SDK's names.
type (
	// Agent is a subagent definition (see docs/agents.md): a named role
	// with its own prompt, tools, model, permission mode and limits.
	// Declare agents in Options.Agents; Runtime.Agents lists every
	// definition cadre found, files included.
	Agent = agent.Definition
	// Isolation is where a subagent works.
	Isolation = agent.Isolation
	// AgentMode says whether a definition is a subagent, a main agent, or
	// both.
	AgentMode = agent.Mode
	// AgentWorkspace is a definition's workspace.
	AgentWorkspace = agent.Workspace
	// WorkspaceMode says whether a subagent shares its parent's workspace.
	WorkspaceMode = agent.WorkspaceMode
	// TaskRule is one rule on which agents an agent may start.
	TaskRule = agent.TaskRule
	// RuleAction is what a rule decides.
	RuleAction = agent.RuleAction
	// AgentFormat is the format a definition was written in.
	AgentFormat = agent.Format
	// AgentSource is where a definition came from.
	AgentSource = agent.Source
	// AgentEntry is one definition cadre found, for listings.
	AgentEntry = agent.Entry
)

// Isolations, modes, workspace modes, rule actions, formats and sources.
const (
	IsolationWorktree = agent.IsolationWorktree
	IsolationRemote   = agent.IsolationRemote

	AgentModeAll      = agent.ModeAll
	AgentModePrimary  = agent.ModePrimary
	AgentModeSubagent = agent.ModeSubagent

	WorkspaceIsolated = agent.WorkspaceIsolated
	WorkspaceShared   = agent.WorkspaceShared

	RuleAllow = agent.RuleAllow
	RuleAsk   = agent.RuleAsk
	RuleDeny  = agent.RuleDeny

	AgentFormatClaude   = agent.FormatClaude
	AgentFormatOpenCode = agent.FormatOpenCode
	AgentFormatHarness  = agent.FormatHarness
	AgentFormatJSON     = agent.FormatJSON
	AgentFormatSDK      = agent.FormatSDK
	AgentFormatBuiltin  = agent.FormatBuiltin

	AgentSourceBuiltin  = agent.SourceBuiltin
	AgentSourceUser     = agent.SourceUser
	AgentSourceProject  = agent.SourceProject
	AgentSourceSettings = agent.SourceSettings
	AgentSourceSDK      = agent.SourceSDK
)
