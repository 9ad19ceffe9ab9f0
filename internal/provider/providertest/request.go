package providertest

import (
	"fmt"

	"github.com/cadre-dev/cadre/internal/builtin"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Request is a main agent's request in the middle of a conversation, for
// benchmarks of request building: twelve tool definitions (the built-in
// tools' schemas, and five more like them), a system prompt and a few turns
// with a tool call.
func Request() *llm.Request {
	// The seven file and shell tools, named one by one: the request (and
	// the goldens made from it) must not change when a built-in is added.
	o := builtin.Options{}
	tools := []tool.Tool{builtin.Read(o), builtin.Write(o), builtin.Edit(o), builtin.Glob(o), builtin.Grep(o), builtin.LS(o), builtin.Bash(o)}
	var specs []llm.ToolSpec
	for _, t := range tools {
		specs = append(specs, t.Info().Spec())
	}
	for i := 0; len(specs) < 12; i++ {
		s := tools[i%len(tools)].Info().Spec()
		s.Name = fmt.Sprintf("%s%d", s.Name, i)
		specs = append(specs, s)
	}
	return &llm.Request{
		System: "You are a helpful agent.",
		Tools:  specs,
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{llm.Text("What is in notes.txt?")}},
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("t1", "Read", []byte(`{"file_path":"notes.txt"}`))}},
			{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("t1", "The secret word is PAPAYA.", false)}},
		},
	}
}
