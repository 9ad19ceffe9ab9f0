package acp

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit/golden"
	"github.com/cadre-dev/cadre/llm"
	acpsdk "github.com/coder/acp-go-sdk"
)

const cwd = "/work/project"

func assistant(parent string, blocks ...llm.Block) cadre.Event {
	e := cadre.Event{Type: cadre.EventAssistant, ParentToolUseID: parent, Message: &llm.Message{Role: llm.RoleAssistant, Content: blocks}}
	if parent != "" {
		e.AgentType, e.AgentID = "reviewer", "child-"+parent
	}
	return e
}

func user(parent string, meta any, blocks ...llm.Block) cadre.Event {
	e := cadre.Event{Type: cadre.EventUser, ParentToolUseID: parent, ToolUseResult: meta, Message: &llm.Message{Role: llm.RoleUser, Content: blocks}}
	if parent != "" {
		e.AgentType, e.AgentID = "reviewer", "child-"+parent
	}
	return e
}

func taskEvent(subtype string, te cadre.TaskEvent) cadre.Event {
	return cadre.Event{Type: cadre.EventSystem, Subtype: subtype, Task: &te}
}

func use(id, name, input string) llm.Block { return llm.ToolUse(id, name, json.RawMessage(input)) }

func thinking(s string) llm.Block { return llm.Block{Type: llm.BlockThinking, Thinking: s} }

// step is one input of a translation scenario: an event, or a permission
// question and its answer.
type step struct {
	ev      *cadre.Event
	replay  bool
	ask     *Ask
	allowed bool
}

func ev(e cadre.Event) step { return step{ev: &e} }

func TestTranslate(t *testing.T) {
	agentCall := use("toolu_agent", "Agent", `{"subagent_type":"reviewer","description":"Review the store","prompt":"Review internal/store"}`)
	tests := []struct {
		name  string
		steps []step
	}{
		{"message_and_thought", []step{
			ev(assistant("", thinking("The user wants a summary."), llm.Text("Here is the summary."))),
		}},
		{"tools_of_the_main_agent", []step{
			ev(assistant("", llm.Text("Let me look."),
				use("toolu_read", "Read", `{"file_path":"notes.txt","offset":3}`),
				use("toolu_edit", "Edit", `{"file_path":"/work/project/main.go","old_string":"foo()","new_string":"bar()"}`),
				use("toolu_write", "Write", `{"file_path":"/tmp/new.txt","content":"hello\n"}`),
				use("toolu_bash", "Bash", "{\"command\":\"go test ./...\\nrm -rf /\"}"),
				use("toolu_grep", "Grep", `{"pattern":"TODO","path":"internal"}`),
				use("toolu_ls", "LS", `{"path":"/work/project/docs"}`),
				use("toolu_fetch", "WebFetch", `{"url":"https://example.com"}`),
				use("toolu_mystery", "mcp__x__y", `not json`),
			)),
			ev(user("", nil,
				llm.ToolResult("toolu_read", "1\thello", false),
				llm.ToolResult("toolu_edit", "The file was updated.", false),
				llm.ToolResult("toolu_write", "Permission denied: /tmp/new.txt is outside the workspace", true),
				llm.ToolResult("toolu_bash", "exit status 1", true),
				llm.ToolResult("toolu_grep", "main.go:3: TODO", false),
				llm.ToolResult("toolu_ls", "a.md", false),
				llm.ToolResult("toolu_fetch", "<html>", false),
				llm.ToolResult("toolu_mystery", "no such tool", true),
				llm.ToolResult("toolu_unknown", "ignored: never announced", false),
			)),
		}},
		{"foreground_subagent_with_a_nested_child", []step{
			ev(assistant("", agentCall)),
			ev(taskEvent(cadre.SubtypeTaskStarted, cadre.TaskEvent{ToolUseID: "toolu_agent", TaskID: "child-toolu_agent"})),
			ev(assistant("toolu_agent", llm.Text("I will search first."), use("toolu_c1", "Grep", `{"pattern":"func Open"}`))),
			ev(user("toolu_agent", nil, llm.ToolResult("toolu_c1", "store.go:10: func Open", false))),
			ev(assistant("toolu_agent", use("toolu_c2", "Agent", `{"subagent_type":"test-finder","description":"Find tests"}`))),
			ev(func() cadre.Event {
				e := assistant("toolu_c2", use("toolu_g1", "Glob", `{"pattern":"**/*_test.go"}`))
				e.AgentType, e.AgentID = "test-finder", "grandchild"
				return e
			}()),
			ev(func() cadre.Event {
				e := user("toolu_c2", nil, llm.ToolResult("toolu_g1", "store_test.go", false))
				e.AgentType, e.AgentID = "test-finder", "grandchild"
				return e
			}()),
			ev(user("toolu_agent", nil, llm.ToolResult("toolu_c2", "One test file: store_test.go", false))),
			ev(assistant("toolu_agent", llm.Text("The store has one test file."))),
			ev(user("", nil, llm.ToolResult("toolu_agent", "(the subagent's output, wrapped for the model) The store has one test file.", false))),
			ev(taskEvent(cadre.SubtypeTaskNotification, cadre.TaskEvent{ToolUseID: "toolu_agent", Status: cadre.TaskCompleted, Summary: "ignored: foreground"})),
		}},
		{"background_subagent", []step{
			ev(assistant("", agentCall)),
			ev(taskEvent(cadre.SubtypeTaskStarted, cadre.TaskEvent{ToolUseID: "toolu_agent", TaskID: "t1", Background: true})),
			ev(user("", map[string]any{"status": "async_launched", "agentId": "t1"}, llm.ToolResult("toolu_agent", "Async agent launched successfully.", false))),
			ev(taskEvent(cadre.SubtypeTaskProgress, cadre.TaskEvent{ToolUseID: "toolu_agent", LastToolName: "Read"})),
			ev(assistant("toolu_agent", llm.Text("Done reading."))),
			ev(taskEvent(cadre.SubtypeTaskNotification, cadre.TaskEvent{ToolUseID: "toolu_agent", Status: cadre.TaskFailed, Summary: "the model API failed"})),
			ev(user("", nil, llm.Text("<task-notification>…</task-notification>"))),
		}},
		{"background_subagent_completed", []step{
			ev(assistant("", agentCall)),
			ev(taskEvent(cadre.SubtypeTaskStarted, cadre.TaskEvent{ToolUseID: "toolu_agent", TaskID: "t1", Background: true})),
			ev(user("", nil, llm.ToolResult("toolu_agent", "Async agent launched successfully.", false))),
			ev(assistant("toolu_agent", llm.Text("All good: the store is tested."))),
			ev(taskEvent(cadre.SubtypeTaskNotification, cadre.TaskEvent{ToolUseID: "toolu_agent", Status: cadre.TaskCompleted, Summary: `Agent "Review the store" completed`})),
		}},
		{"plan", []step{
			ev(assistant("", use("toolu_todo", "TodoWrite", `{"todos":[{"content":"Read the code","status":"completed","activeForm":"Reading"},{"content":"Write tests","status":"in_progress"},{"content":"Ship","status":"pending"}]}`))),
			ev(user("", nil, llm.ToolResult("toolu_todo", "Todos updated", false))),
		}},
		{"replay", []step{
			{ev: &cadre.Event{Type: cadre.EventUser, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("What does main.go do?")}}}, replay: true},
			{ev: &cadre.Event{Type: cadre.EventAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{use("toolu_r", "Read", `{"file_path":"/work/project/main.go"}`)}}}, replay: true},
			{ev: &cadre.Event{Type: cadre.EventUser, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("toolu_r", "package main", false)}}}, replay: true},
			{ev: &cadre.Event{Type: cadre.EventAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("It starts the server.")}}}, replay: true},
		}},
		{"permission_of_a_subagent_before_its_message", []step{
			ev(assistant("", agentCall)),
			{ask: &Ask{Tool: "Bash", Input: json.RawMessage(`{"command":"npm test"}`), ToolUseID: "toolu_cb", Agent: "reviewer", AgentID: "child-toolu_agent", ParentToolUseID: "toolu_agent", Suggestions: []string{"Bash(npm test:*)"}}, allowed: true},
			ev(assistant("toolu_agent", use("toolu_cb", "Bash", `{"command":"npm test"}`))),
			ev(user("toolu_agent", nil, llm.ToolResult("toolu_cb", "ok", false))),
			{ask: &Ask{Tool: "Edit", Input: json.RawMessage(`{"file_path":"a.go","old_string":"x","new_string":"y"}`), ToolUseID: "toolu_me", Agent: "main"}},
		}},
		{"permission_with_the_file_change", []step{
			{ask: &Ask{Tool: "Edit", Input: json.RawMessage(`{"file_path":"/work/project/a.go","old_string":"x","new_string":"y"}`), ToolUseID: "toolu_e", Agent: "main",
				Change: &cadre.FileChange{Path: "/work/project/a.go", Old: "package a\n\nvar x = 1\n", New: "package a\n\nvar y = 1\n", Diff: "--- /work/project/a.go\n+++ /work/project/a.go\n@@ -1,3 +1,3 @@\n package a\n \n-var x = 1\n+var y = 1\n"}}},
			{ask: &Ask{Tool: "Write", Input: json.RawMessage(`{"file_path":"/work/project/new.go","content":"package a\n"}`), ToolUseID: "toolu_w", Agent: "main",
				Change: &cadre.FileChange{Path: "/work/project/new.go", Create: true, New: "package a\n", Diff: "--- /dev/null\n+++ /work/project/new.go\n@@ -0,0 +1 @@\n+package a\n"}}},
			// Too large to carry whole: the call's own strings.
			{ask: &Ask{Tool: "Edit", Input: json.RawMessage(`{"file_path":"/work/project/big.go","old_string":"p","new_string":"q"}`), ToolUseID: "toolu_big", Agent: "main",
				Change: &cadre.FileChange{Path: "/work/project/big.go", Diff: "--- /work/project/big.go\n+++ /work/project/big.go\n@@ -1 +1 @@\n-p\n+q\n"}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTranslator(cwd)
			var out []any
			for _, s := range tt.steps {
				switch {
				case s.ev != nil:
					for _, u := range tr.event(*s.ev, s.replay) {
						out = append(out, u)
					}
				case s.ask != nil:
					req, pre := tr.permission(*s.ask)
					for _, u := range pre {
						out = append(out, u)
					}
					out = append(out, map[string]any{"permissionRequest": req})
					if s.allowed {
						for _, u := range tr.running(tr.calls[s.ask.ToolUseID]) {
							out = append(out, u)
						}
					}
				}
			}
			got, err := json.MarshalIndent(out, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range out {
				if su, ok := u.(acpsdk.SessionUpdate); ok {
					if err := su.Validate(); err != nil {
						t.Errorf("invalid update %+v: %v", su, err)
					}
				}
			}
			golden.Check(t, filepath.Join("testdata", tt.name+".json"), append(got, '\n'))
		})
	}
}

// A final status is never undone by a late sign of life (a permission
// answer processed after the call's result).
func TestTranslateFinalStatusStays(t *testing.T) {
	tr := newTranslator(cwd)
	tr.event(assistant("", use("toolu_b", "Bash", `{"command":"ls"}`)), false)
	tr.event(user("", nil, llm.ToolResult("toolu_b", "a", false)), false)
	if got := tr.running(tr.calls["toolu_b"]); got != nil {
		t.Errorf("running after completed sent %v", got)
	}
	if got := tr.finish(tr.calls["toolu_b"], acpsdk.ToolCallStatusFailed, nil); got != nil {
		t.Errorf("finish after completed sent %v", got)
	}
}
