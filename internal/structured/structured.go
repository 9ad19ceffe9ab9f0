package structured

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Name is the tool's name, Claude Code's.
const Name = "StructuredOutput"

var (
	//go:embed tool.md
	description string
	//go:embed enforce.md
	enforce string
)

// Tool is the StructuredOutput tool of one run. It keeps the last output
// given, for the run's result. It is safe for concurrent use.
type Tool struct {
	schema json.RawMessage

	mu     sync.Mutex
	output json.RawMessage
	asked  bool
}

// New makes the tool for schema, a JSON Schema object. A schema that is not
// one is an error saying why.
func New(schema json.RawMessage) (*Tool, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("the JSON schema is not valid JSON Schema: %w", err)
	}
	if _, err := s.Resolve(nil); err != nil {
		return nil, fmt.Errorf("the JSON schema cannot be used: %w", err)
	}
	if s.Type != "object" {
		// Tool inputs are objects: the schema of an answer is one.
		return nil, errors.New(`the JSON schema must describe an object ("type": "object")`)
	}
	return &Tool{schema: schema}, nil
}

// Info describes the tool. It touches nothing, so, as for the task tools,
// only deny rules judge it.
func (t *Tool) Info() tool.Info {
	return tool.Info{Name: Name, Description: strings.TrimSpace(description), InputSchema: t.schema, Access: tool.AccessAgent}
}

// Call keeps the output (the loop has checked it against the schema) and
// ends the turn: the answer is given.
func (t *Tool) Call(_ context.Context, _ tool.Env, input json.RawMessage) (tool.Result, error) {
	t.mu.Lock()
	t.output = append(json.RawMessage(nil), input...)
	t.mu.Unlock()
	r := tool.Text("Structured output provided successfully")
	r.Stop = true
	return r, nil
}

// Output is the last structured output given, or nil.
func (t *Tool) Output() json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.output
}

// Remind is for the loop's end of a turn: when the model ended without
// giving its output, it is told once, in a user message, to do it now, as
// Claude Code tells it; after that the turn ends as it is.
func (t *Tool) Remind() *llm.Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.output != nil || t.asked {
		return nil
	}
	t.asked = true
	m := llm.UserText(strings.TrimSpace(enforce))
	return &m
}
