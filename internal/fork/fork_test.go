package fork

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// forkingTurn is a caller's turn whose reply makes three calls.
func forkingTurn() *tool.Turn {
	reply := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		llm.Text("forking"),
		llm.ToolUse("a", "Agent", json.RawMessage(`{}`)),
		llm.ToolUse("b", "Agent", json.RawMessage(`{}`)),
		llm.ToolUse("c", "Read", json.RawMessage(`{}`)),
	}}
	return &tool.Turn{Request: &llm.Request{Messages: []llm.Message{llm.UserText("hello")}}, Reply: reply}
}

// TestInputSharesThePrefix (S-F1): every fork of one message opens with
// the same placeholder results, one per call, the last a cache breakpoint;
// only the directive after them differs, and it carries the task and the
// worktree.
func TestInputSharesThePrefix(t *testing.T) {
	turn := forkingTurn()
	one, two := Input(turn, " first task ", ""), Input(turn, "second task", "/w/tree")
	if len(one.Content) != 4 || one.Role != llm.RoleUser {
		t.Fatalf("fork input: %d blocks as %s, want 3 placeholders and the directive as user", len(one.Content), one.Role)
	}
	if !reflect.DeepEqual(one.Content[:3], two.Content[:3]) {
		t.Error("two forks of one message differ before their directives")
	}
	for i, b := range one.Content[:3] {
		if b.Type != llm.BlockToolResult || b.Cache != (i == 2) {
			t.Errorf("block %d: %s, cache %v; want a placeholder result, the last one a breakpoint", i, b.Type, b.Cache)
		}
	}
	dir := one.Content[3].Text
	if !strings.HasPrefix(dir, Tag) || !strings.HasSuffix(dir, "Your task: first task\n</fork-boilerplate>") || strings.Contains(dir, "worktree at") {
		t.Errorf("directive without a worktree:\n%s", dir)
	}
	if d := two.Content[3].Text; !strings.Contains(d, "worktree at /w/tree") {
		t.Errorf("directive with a worktree does not name it:\n%s", d)
	}
}

// TestHistoryAndGuard: a fork starts from the caller's messages and its
// reply (no reply when forked between turns), and a conversation holding
// the directive is a fork's.
func TestHistoryAndGuard(t *testing.T) {
	turn := forkingTurn()
	if h := History(turn); len(h) != 2 || h[1].Role != llm.RoleAssistant {
		t.Fatalf("history: %d messages, want the request's and the reply", len(h))
	}
	between := &tool.Turn{Request: turn.Request}
	if h := History(between); len(h) != 1 {
		t.Fatalf("history between turns: %d messages, want the request's only", len(h))
	}
	if InFork(turn) || InFork(nil) {
		t.Error("a plain conversation is taken for a fork's")
	}
	child := &tool.Turn{Request: &llm.Request{Messages: append(History(turn), Input(turn, "x", ""))}}
	if !InFork(child) {
		t.Error("a fork's conversation is not known as one")
	}
}

// echo is a tool that answers with its name.
type echo struct{ name string }

func (e echo) Info() tool.Info { return tool.Info{Name: e.name} }
func (e echo) Call(context.Context, tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.Text("ran " + e.name), nil
}

// TestReboundTools: a fork is shown the caller's definitions; its agent
// tools run as its own, or refuse; a tool outside a command's
// allowed-tools refuses, saying which it may use.
func TestReboundTools(t *testing.T) {
	ctx := t.Context()
	call := func(tl tool.Tool) string {
		res, err := tl.Call(ctx, tool.Env{}, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].Text
	}
	shown := tool.Info{Name: "TaskOutput", Description: "the parent's"}
	r := Rerouted(shown, echo{"own TaskOutput"})
	if r.Info().Description != "the parent's" || call(r) != "ran own TaskOutput" {
		t.Errorf("rerouted: shows %q, runs %q", r.Info().Description, call(r))
	}
	if got := call(Rerouted(tool.Info{Name: "Agent"}, nil)); got != ErrInFork.Error() {
		t.Errorf("Agent in a fork: %q", got)
	}
	if got := call(Rerouted(tool.Info{Name: "TaskStop"}, nil)); !strings.Contains(got, "not available to a fork") {
		t.Errorf("TaskStop in a fork: %q", got)
	}
	if got := call(Refusing(tool.Info{Name: "Bash"}, NotAllowed("Bash", []string{"Read", "Grep"}))); !strings.Contains(got, "allowed-tools (Read, Grep)") {
		t.Errorf("a tool outside allowed-tools: %q", got)
	}
}
