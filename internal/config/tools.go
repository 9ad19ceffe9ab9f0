package config

import (
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/suggest"
)

// ToolNames are the tool names a permission rule or a subagents.tools
// entry may name without a warning: cadre's tools under every surface
// profile, and Claude Code's tools cadre does not have, which settings
// shared with Claude Code name. MCP tools (mcp__…) are not listed: which
// exist is not known when settings load.
func ToolNames() []string {
	return []string{
		// Built-in tools.
		"Read", "Write", "Edit", "Glob", "Grep", "LS", "Bash",
		// Subagent tools of the claude, opencode, harness and gateway
		// profiles (DESIGN §12); Task is Claude Code's old name of Agent.
		"Agent", "Task", "SendMessage", "TaskOutput", "TaskStop", "TaskList",
		"task",
		"agent_spawn", "agent_send", "agent_list", "task_output", "task_cancel", "task_list", "wait_async_results",
		"sessions_spawn", "agents_list",
		// Claude Code's.
		"WebFetch", "WebSearch", "NotebookEdit", "NotebookRead", "MultiEdit", "TodoWrite", "TodoRead",
		"BashOutput", "KillShell", "KillBash", "ExitPlanMode", "SlashCommand", "Skill",
		"ListMcpResourcesTool", "ReadMcpResourceTool",
	}
}

// knownTool reports whether a rule's tool part needs no checking: a
// known name, a pattern, or an MCP name.
func knownTool(name string, known []string) bool {
	if strings.Contains(name, "*") || strings.HasPrefix(name, "mcp__") {
		return true
	}
	for _, k := range known {
		if k == name {
			return true
		}
	}
	return false
}

// foldTool is the known tool name equal to name ignoring case, if there is
// one and name is not known as it is.
func foldTool(name string, known []string) (string, bool) {
	if knownTool(name, known) {
		return "", false
	}
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return k, true
		}
	}
	return "", false
}

// matching is how a list matches tool names, which decides the advice of
// its warnings.
type matching int

const (
	foldCase   matching = iota // deny and ask rules: ignoring case
	exactGrant                 // allow rules: exactly
	exactName                  // subagents.tools entries: exactly
)

// unknownTool is the warning message for a list entry naming tool, or ""
// when the name is known.
func unknownTool(tool string, m matching) string {
	known := ToolNames()
	if knownTool(tool, known) {
		return ""
	}
	msg := fmt.Sprintf("unknown tool %q", tool)
	near, ok := suggest.Closest(tool, known)
	if ok {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	switch folded, fold := foldTool(tool, known); {
	case fold && m == foldCase:
		return msg + fmt.Sprintf("; deny and ask rules ignore case, so this one applies to %s", folded)
	case fold && m == exactGrant:
		return msg + "; allow rules match exactly, so this one allows nothing"
	}
	return msg + "; it matches no tool"
}

// ruleWarnings checks the tool names of one layer's rule lists and
// subagents.tools; file and key name where each came from.
func ruleWarnings(file string, s *Settings) []Warning {
	var out []Warning
	for _, l := range []struct {
		key   string
		rules []string
		m     matching
	}{{"allow", s.Permissions.Allow, exactGrant}, {"ask", s.Permissions.Ask, foldCase}, {"deny", s.Permissions.Deny, foldCase}} {
		for i, text := range l.rules {
			rule, err := permission.ParseRule(text)
			if err != nil {
				continue // validate reports it
			}
			if msg := unknownTool(rule.Tool, l.m); msg != "" {
				out = append(out, Warning{File: file, Key: fmt.Sprintf("permissions.%s[%d]", l.key, i), Message: msg})
			}
		}
	}
	for _, l := range []struct {
		key   string
		names []string
	}{{"allow", s.Subagents.Tools.Allow}, {"deny", s.Subagents.Tools.Deny}} {
		for i, name := range l.names {
			if msg := unknownTool(name, exactName); msg != "" {
				out = append(out, Warning{File: file, Key: fmt.Sprintf("subagents.tools.%s[%d]", l.key, i), Message: msg})
			}
		}
	}
	return out
}
