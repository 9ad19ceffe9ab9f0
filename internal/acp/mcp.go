package acp

import (
	"encoding/json"
	"fmt"

	"github.com/cadre-dev/cadre/internal/mcp"
	acpsdk "github.com/coder/acp-go-sdk"
)

// mcpConfig turns the MCP servers an editor passes with a session into an
// {"mcpServers": {…}} document (Claude Code's form, which --mcp-config
// reads) for the runtime ("" for none). The editor
// is the user's own program, so its servers are trusted as the user's
// --mcp-config is; the runtime still checks each definition.
func mcpConfig(servers []acpsdk.McpServer) (string, error) {
	if len(servers) == 0 {
		return "", nil
	}
	out := map[string]mcp.Config{}
	for i, s := range servers {
		var name string
		var def mcp.Config
		switch {
		case s.Stdio != nil:
			name = s.Stdio.Name
			def = mcp.Config{Type: "stdio", Command: s.Stdio.Command, Args: s.Stdio.Args, Env: map[string]string{}}
			for _, e := range s.Stdio.Env {
				def.Env[e.Name] = e.Value
			}
		case s.Http != nil:
			name = s.Http.Name
			def = mcp.Config{Type: "http", URL: s.Http.Url, Headers: headers(s.Http.Headers)}
		case s.Sse != nil:
			name = s.Sse.Name
			def = mcp.Config{Type: "sse", URL: s.Sse.Url, Headers: headers(s.Sse.Headers)}
		default:
			return "", fmt.Errorf("MCP server %d: only stdio, http and sse servers are supported", i)
		}
		if name == "" {
			return "", fmt.Errorf("MCP server %d has no name", i)
		}
		if _, dup := out[name]; dup {
			return "", fmt.Errorf("MCP server %q is given twice", name)
		}
		out[name] = def
	}
	b, err := json.Marshal(map[string]any{"mcpServers": out})
	return string(b), err
}

func headers(hs []acpsdk.HttpHeader) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, h := range hs {
		m[h.Name] = h.Value
	}
	return m
}
