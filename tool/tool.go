package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cadre-dev/cadre/llm"
)

// Access says what a tool touches; permission modes decide by it.
type Access string

const (
	AccessRead  Access = "read"  // reads files (Read, Glob, Grep, LS)
	AccessEdit  Access = "edit"  // changes files (Write, Edit)
	AccessExec  Access = "exec"  // runs commands (Bash)
	AccessOther Access = "other" // anything else; asks unless allowed
	// AccessAgent tools start subagents (Agent, task). Their own spawn
	// permission layer decides each call, so the execution layer only
	// applies deny rules to them.
	AccessAgent Access = "agent"
)

// Info describes a tool.
type Info struct {
	Name string
	// Aliases are other names a call may use (Task for Agent); the model is
	// offered Name only.
	Aliases     []string
	Description string
	// InputSchema is a JSON Schema object. Typed fills it in from its input type.
	InputSchema json.RawMessage
	Access      Access
	// ConcurrencySafe tools of one assistant message run at the same time;
	// the others run alone, in order.
	ConcurrencySafe bool
}

// Spec is the model-facing part of i.
func (i Info) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: i.Name, Description: i.Description, InputSchema: i.InputSchema}
}

// Env is what a call needs to know about where it runs.
type Env struct {
	// Cwd is the session's working directory: relative paths resolve
	// against it and commands start in it.
	Cwd string
	// SessionID is the calling session.
	SessionID string
	// ToolUseID is the id of the tool_use block being answered.
	ToolUseID string
	// Turn is the model turn the call belongs to, set by the loop.
	Turn *Turn
	// Readable, when set, reports whether a search or listing (Grep, Glob,
	// LS) may show the file or directory at the absolute path: the loop
	// fills it from the permission rules, since one call shows many files
	// that no rule was asked about. Tools leave out what it rejects and do
	// not descend into a rejected directory; nil shows everything.
	Readable func(path string) bool
}

// Turn is the model exchange a tool call came from: the request as sent
// (its per-turn context included; only the session preamble, which every
// loop of the session puts in front again, left out), the assistant
// message that holds the call, and the tools that were offered. Forks
// reuse them exactly, so that their requests share the parent's prefix.
// Read-only: calls of one message run concurrently.
type Turn struct {
	Request *llm.Request
	Reply   llm.Message
	Tools   *Set
}

// Result is a tool's answer.
type Result struct {
	// Content goes to the model as the tool_result's content.
	Content []llm.Block
	IsError bool
	// Meta is structured detail for front ends (stream-json's
	// tool_use_result); the model never sees it.
	Meta any
	// Stop ends the agent's turn once this batch of calls has its results,
	// with no further model call: a tool that delivers the final answer
	// (StructuredOutput) sets it.
	Stop bool
}

// Text returns a successful result holding s.
func Text(s string) Result { return Result{Content: []llm.Block{llm.Text(s)}} }

// Errorf returns an error result; the loop hands it to the model, which may
// correct itself.
func Errorf(format string, args ...any) Result {
	return Result{Content: []llm.Block{llm.Text(fmt.Sprintf(format, args...))}, IsError: true}
}

// Tool is something a model can call.
//
// A returned error is turned into an is_error tool_result carrying its text,
// exactly like a Result with IsError; tools return an error for failures they
// did not anticipate and an error Result for the ones they explain.
type Tool interface {
	Info() Info
	Call(ctx context.Context, env Env, input json.RawMessage) (Result, error)
}

// Targeted is implemented by tools whose calls permission rules can match
// with a specifier: the absolute path a file tool touches, or the command a
// shell tool runs. Input has already been validated.
type Targeted interface {
	Target(env Env, input json.RawMessage) (string, error)
}

// Validating is implemented by tools that check their own input against
// their schema (Typed does, with a schema resolved once).
type Validating interface {
	ValidateInput(input json.RawMessage) error
}
