package opencode

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"strings"

	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The opencode profile: OpenCode's task tool.

// profile is the opencode profile of one Service.
type profile struct{ svc *subagent.Service }

// New is the opencode profile on svc (subagent.NewProfile).
func New(svc *subagent.Service) subagent.Profile { return &profile{svc: svc} }

// Tools are the task tool alone, for a caller that may spawn.
func (s *profile) Tools(c subagent.Caller) []tool.Tool {
	if !s.svc.MaySpawn(c) {
		return nil
	}
	return []tool.Tool{s.taskTool(c)}
}

// SpawnTool is task.
func (s *profile) SpawnTool() string { return "task" }

// ShellCalls are Claude Code's TaskOutput and TaskStop words: OpenCode has
// no tools of its own for a background command.
func (s *profile) ShellCalls(id string) (output, stop string) {
	return fmt.Sprintf("TaskOutput with task_id %q (block: false to look without waiting; BashOutput with bash_id and a regex filter works too)", id),
		fmt.Sprintf("TaskStop with task_id %q", id)
}

var (
	//go:embed prompts/task_tool.md
	taskToolText string
	taskToolTmpl = prompt.Lazy("task_tool", taskToolText, nil)

	// taskSchema is TaskInput's schema, encoded when the code changes
	// (TestSchemasAreTheInputTypes writes it with -update) rather than
	// inferred by reflection in every process that offers the tool.
	//go:embed schemas/task.json
	taskSchema json.RawMessage
)

// TaskInput is OpenCode's task tool input (the opencode surface profile).
type TaskInput struct {
	Description  string `json:"description" jsonschema:"A short (3-5 words) description of the task"`
	Prompt       string `json:"prompt" jsonschema:"The task for the agent to perform"`
	SubagentType string `json:"subagent_type" jsonschema:"The type of specialized agent to use for this task"`
	TaskID       string `json:"task_id,omitempty" jsonschema:"This should only be set if you mean to resume a previous task (you can pass a prior task_id and the task will continue the same subagent session as before instead of creating a fresh one)"`
	SessionID    string `json:"session_id,omitempty" jsonschema:"Alias of task_id"`
	Command      string `json:"command,omitempty" jsonschema:"The command that triggered this task"`
}

func (s *profile) taskTool(c subagent.Caller) tool.Tool {
	type row struct{ Name, Description string }
	var rows []row
	for _, d := range s.svc.Listed(c) {
		rows = append(rows, row{d.Name, prompt.OneLine(d.Description)})
	}
	t := subagent.CallerTool(s.svc, tool.Info{
		Name:            "task",
		InputSchema:     taskSchema,
		Description:     prompt.Render(taskToolTmpl(), map[string]any{"Agents": rows}),
		Access:          tool.AccessAgent,
		ConcurrencySafe: true,
	}, func(ctx context.Context, env tool.Env, in TaskInput) (tool.Result, error) {
		id := in.TaskID
		if id == "" {
			id = in.SessionID
		} else if in.SessionID != "" && in.SessionID != in.TaskID {
			return tool.Errorf("task_id %q and session_id %q disagree; pass one of them", in.TaskID, in.SessionID), nil
		}
		out, err := s.svc.Spawn(ctx, c, subagent.SpawnRequest{
			ToolUseID: env.ToolUseID, Description: in.Description, Prompt: in.Prompt,
			SubagentType: in.SubagentType, SessionID: id, Foreground: true,
		})
		if err != nil {
			return openCodeError("", err), nil
		}
		return openCodeResult(out)
	})
	t.TargetOf = func(_ tool.Env, in TaskInput) string { return in.SubagentType }
	return t
}

// openCodeResult is OpenCode 1.18's task output: the child session's id as
// the task id, then its final text.
func openCodeResult(o *subagent.Outcome) (tool.Result, error) {
	res := o.Result()
	if cause, ok := o.TimedOut(); ok {
		return openCodeError(o.SessionID(), cause), nil
	}
	if errors.Is(res.Err, context.Canceled) || errors.Is(res.Err, context.DeadlineExceeded) {
		return tool.Result{}, res.Err
	}
	if res.Err != nil {
		return openCodeError(o.SessionID(), res.Err), nil
	}
	// The child's text is escaped, and framed by a note before it
	// (frame.go): it must not close the task or open tags of its own.
	body := fmt.Sprintf("<task id=%q state=\"completed\">\n<note>%s</note>\n<task_result>\n%s\n</task_result>\n</task>", o.SessionID(), prompt.Untrusted, prompt.Escape(strings.TrimSpace(res.Result)))
	return tool.Result{
		Content: []llm.Block{llm.Text(body)},
		Meta:    map[string]any{"status": "completed", "sessionId": o.SessionID(), "agentType": o.Def().Name, "totalTokens": res.Usage.Total()},
	}, nil
}

func openCodeError(id string, err error) tool.Result {
	return tool.Result{
		Content: []llm.Block{llm.Text(fmt.Sprintf("<task id=%q state=\"error\">\n<task_error>%s</task_error>\n</task>", id, html.EscapeString(err.Error())))},
		IsError: true,
	}
}
