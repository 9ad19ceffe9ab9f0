// Package mcptest is a small MCP server built with the official Go SDK,
// for tests of cadre's MCP client: in process over HTTP, SSE or memory,
// and as the stdio helper binary in ../testdata/server.
package mcptest

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options shape the server.
type Options struct {
	// OnCall runs before every tool call with the call's number (1, 2…):
	// the helper binary exits there to play a crash.
	OnCall func(n int64)
}

// EchoInput is the echo tool's input.
type EchoInput struct {
	Message string `json:"message" jsonschema:"the text to echo"`
}

// New returns a server with the tools echo ("Echo: …"), fail (an
// isError result), image (a PNG), structured (structured content only),
// hang (answers only when the call is cancelled),
// a text resource test://hello and a prompt greet(name).
func New(opts Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "cadre-test", Version: "1"}, nil)
	var calls atomic.Int64
	count := func() {
		if n := calls.Add(1); opts.OnCall != nil {
			opts.OnCall(n)
		}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the message.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoInput) (*mcp.CallToolResult, any, error) {
			count()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			count()
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it failed on purpose"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Returns a tiny PNG."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			count()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG")}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "structured", Description: "Returns structured content."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			count()
			return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"answer": 42}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answers."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			count()
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	s.AddResource(&mcp.Resource{URI: "test://hello", Name: "hello", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello from a resource"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["name"] + "."}}}}, nil
		})
	return s
}

// Reaped fails t unless the process whose pid is in pidFile is gone
// within a deadline: reaped, not a zombie (which keeps its /proc entry)
// and not an orphan still running. Tests start servers through
// `sh -c 'echo $$ > pidFile; exec server'` to learn the pid.
func Reaped(t testing.TB, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the MCP server never started: %v", err)
	}
	proc := "/proc/" + strings.TrimSpace(string(b))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if _, err := os.Stat(proc); os.IsNotExist(err) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("MCP server process %s was not reaped", proc)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
