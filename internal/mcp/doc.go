// Package mcp connects cadre to Model Context Protocol servers with the
// official Go SDK: it reads server definitions as Claude Code writes them
// (.mcp.json, settings, --mcp-config, an agent file's mcpServers), starts
// them in parallel over stdio, streamable HTTP or SSE, and offers their
// tools to agents as mcp__<server>__<tool>, with the resource tools
// (ListMcpResourcesTool, ReadMcpResourceTool) and prompts beside them.
//
// A Manager owns the connections of one scope: the runtime's, or one
// subagent run's inline servers. A server that fails to start or dies is
// reported through the Manager's logger and its status; its tools answer
// every later call with an error result, and pools built afterwards leave
// them out.
package mcp
