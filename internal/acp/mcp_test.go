package acp

import (
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

func TestMCPConfig(t *testing.T) {
	stdio := acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: "files", Command: "mcp-files", Args: []string{"/p"}, Env: []acpsdk.EnvVariable{{Name: "TOKEN", Value: "t"}}}}
	web := acpsdk.McpServer{Http: &acpsdk.McpServerHttpInline{Name: "web", Type: "http", Url: "https://mcp.example/x", Headers: []acpsdk.HttpHeader{{Name: "Authorization", Value: "Bearer k"}}}}
	sse := acpsdk.McpServer{Sse: &acpsdk.McpServerSseInline{Name: "old", Type: "sse", Url: "https://mcp.example/sse", Headers: []acpsdk.HttpHeader{}}}
	tests := []struct {
		name    string
		servers []acpsdk.McpServer
		want    string
		wantErr bool
	}{
		{"none", nil, "", false},
		{"all_transports", []acpsdk.McpServer{stdio, web, sse}, `{"mcpServers":{"files":{"type":"stdio","command":"mcp-files","args":["/p"],"env":{"TOKEN":"t"}},"old":{"type":"sse","url":"https://mcp.example/sse"},"web":{"type":"http","url":"https://mcp.example/x","headers":{"Authorization":"Bearer k"}}}}`, false},
		{"twice", []acpsdk.McpServer{stdio, stdio}, "", true},
		{"nameless", []acpsdk.McpServer{{Stdio: &acpsdk.McpServerStdio{Command: "x"}}}, "", true},
		{"acp_transport", []acpsdk.McpServer{{Acp: &acpsdk.McpServerAcpInline{}}}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcpConfig(tt.servers)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("mcpConfig = %s, %v; want %s (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
