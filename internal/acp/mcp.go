package acp

import (
	"encoding/json"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"
)

// mcpServer is one MCP server in Claude Code's mcpServers form, the form
// cadre's --mcp-config reads.
type mcpServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// mcpConfig turns the MCP servers an editor passes with a session into an
// {"mcpServers": {…}} document for the runtime ("" for none). The editor
// is the user's own program, so its servers are trusted as the user's
// --mcp-config is; the runtime still checks each definition.
func mcpConfig(servers []acpsdk.McpServer) (string, error) {
	if len(servers) == 0 {
		return "", nil
	}
	out := map[string]mcpServer{}
	for i, s := range servers {
		var name string
		var def mcpServer
		switch {
		case s.Stdio != nil:
			name = s.Stdio.Name
			def = mcpServer{Type: "stdio", Command: s.Stdio.Command, Args: s.Stdio.Args, Env: map[string]string{}}
			for _, e := range s.Stdio.Env {
				def.Env[e.Name] = e.Value
			}
		case s.Http != nil:
			name = s.Http.Name
			def = mcpServer{Type: "http", URL: s.Http.Url, Headers: headers(s.Http.Headers)}
		case s.Sse != nil:
			name = s.Sse.Name
			def = mcpServer{Type: "sse", URL: s.Sse.Url, Headers: headers(s.Sse.Headers)}
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
