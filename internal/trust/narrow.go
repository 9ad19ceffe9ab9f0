package trust

import (
	"strings"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/command"
)

// NarrowAgent removes from a project's agent definition what would widen
// what its runs may do or start — permission allow rules, permissionMode,
// its own MCP servers and hooks, allowAgents, memory: user (a directory
// every other project loads) — and returns what it removed. Its prompt, tools list,
// deny and ask rules stay: they only narrow.
func NarrowAgent(d *agent.Definition) []Item {
	src := d.Path
	var out []Item
	for _, r := range d.Allow {
		out = append(out, Item{Source: src, Key: "permission (allow)", Value: r})
	}
	d.Allow = nil
	if d.PermissionMode != "" {
		out = append(out, Item{Source: src, Key: "permissionMode", Value: d.PermissionMode})
		d.PermissionMode = ""
	}
	if len(d.MCPServers) > 0 {
		out = append(out, Item{Source: src, Key: "mcpServers", Value: Value(d.MCPServers)})
		d.MCPServers = nil
	}
	if d.Hooks != nil {
		out = append(out, Item{Source: src, Key: "hooks", Value: Value(d.Hooks)})
		d.Hooks = nil
	}
	if d.AllowAgents != nil {
		// Whom the gateway's sessions_spawn may name (S-P1): a grant.
		out = append(out, Item{Source: src, Key: "allowAgents", Value: strings.Join(d.AllowAgents, ", ")})
		d.AllowAgents = nil
	}
	if strings.EqualFold(d.Memory, "user") {
		out = append(out, Item{Source: src, Key: "memory", Value: d.Memory})
		d.Memory = ""
	}
	return out
}

// NarrowCommand keeps a project's slash command or skill from granting
// tools: its allowed-tools still restrict a fork's pool, but allow
// nothing. It returns what no longer applies.
func NarrowCommand(c *command.Command) []Item {
	if len(c.AllowedTools) == 0 {
		return nil
	}
	c.NoGrant = true
	return []Item{{Source: c.Path, Key: "allowed-tools", Value: strings.Join(c.AllowedTools, ", ")}}
}
