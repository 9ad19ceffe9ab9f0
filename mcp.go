package cadre

import (
	"context"

	"github.com/cadre-dev/cadre/internal/mcp"
)

// MCP servers (docs/mcp.md): the runtime's come from the settings,
// .mcp.json and Options.MCPConfig; an agent definition may add its own for
// its runs.

// MCPServer is one MCP server's status.
type MCPServer struct {
	Name string
	// Source says where it was defined: ".mcp.json", "settings <file>",
	// "--mcp-config …", "agent <name>".
	Source string
	// Transport is stdio, http or sse.
	Transport string
	// Status is connected, pending (still starting), failed (Error says
	// why: it did not start, or it stopped), needs-approval (a project
	// server nobody approved) or disabled.
	Status             string
	Error              string
	Tools              int
	Resources, Prompts bool
}

// MCPServers starts the MCP servers if no run has, waits for them as a
// run does, and returns their status: `cadre mcp list`.
func (r *Runtime) MCPServers(ctx context.Context) []MCPServer {
	return convert(r.app.MCPReady(ctx).Status(), mcpServerOf)
}

func mcpServerOf(s mcp.Status) MCPServer {
	return MCPServer{Name: s.Name, Source: s.Source, Transport: s.Transport, Status: string(s.State), Error: s.Err,
		Tools: s.Tools, Resources: s.Resources, Prompts: s.Prompts}
}

// SandboxReport says what this machine's sandbox supports and what it
// enforces for this runtime's commands, for `cadre sandbox status`.
func (r *Runtime) SandboxReport() string { return r.app.SandboxReport() }
