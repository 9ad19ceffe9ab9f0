package claude

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/subagent/shell"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The tools that talk to running agents (S-T1…S-T4), claude profile.

// TaskOutputInput is TaskOutput's input. BashOutput, its older name for
// background commands, calls it with bash_id and an optional filter.
type TaskOutputInput struct {
	TaskID  string `json:"task_id,omitempty" jsonschema:"The id of the task (the agentId of a background agent, or the ID of a background command)"`
	Block   *bool  `json:"block,omitempty" jsonschema:"Wait for the task to finish (default true)"`
	Timeout *int   `json:"timeout,omitempty" jsonschema:"How long to wait, in milliseconds (default 30000, at most 600000)"`
	BashID  string `json:"bash_id,omitempty" jsonschema:"Alias of task_id, for a background command"`
	Filter  string `json:"filter,omitempty" jsonschema:"For a background command: a regular expression; only the output lines it matches are shown"`
}

// TaskStopInput is TaskStop's input; shell_id is its old name (KillShell's).
type TaskStopInput struct {
	TaskID  string `json:"task_id,omitempty" jsonschema:"The id of the task to stop"`
	ShellID string `json:"shell_id,omitempty" jsonschema:"Alias of task_id"`
}

// TaskListInput is TaskList's input.
type TaskListInput struct {
	StatusFilter string `json:"status_filter,omitempty" jsonschema:"running, completed, failed, cancelled or all (default all)"`
}

// SendMessageInput is SendMessage's input.
type SendMessageInput struct {
	To      string `json:"to" jsonschema:"The agent: its name, or its agentId"`
	Message string `json:"message" jsonschema:"The message"`
	Summary string `json:"summary" jsonschema:"A 5-10 word preview of the message, shown in progress displays"`
}

func (s *profile) taskTools(c subagent.Caller) []tool.Tool {
	output := subagent.CallerTool(s.svc, tool.Info{Name: "TaskOutput", Aliases: []string{"BashOutput"}, InputSchema: schema("task_output"), Description: prompt.Render(taskOutputTmpl(), nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(ctx context.Context, _ tool.Env, in TaskOutputInput) (tool.Result, error) {
			return s.taskOutput(ctx, c, in)
		})
	stop := subagent.CallerTool(s.svc, tool.Info{Name: "TaskStop", Aliases: []string{"KillShell"}, InputSchema: schema("task_stop"), Description: prompt.Render(taskStopTmpl(), nil), Access: tool.AccessAgent},
		func(ctx context.Context, _ tool.Env, in TaskStopInput) (tool.Result, error) {
			id := in.TaskID
			if id == "" {
				id = in.ShellID
			}
			if err := s.svc.InTree(ctx, c, id); err != nil {
				return tool.Errorf("%v", err), nil
			}
			msg, err := s.svc.Stop(ctx, id)
			if err != nil {
				return tool.Errorf("%v", err), nil
			}
			return tool.Text(msg), nil
		})
	list := subagent.CallerTool(s.svc, tool.Info{Name: "TaskList", InputSchema: schema("task_list"), Description: prompt.Render(taskListTmpl(), nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(ctx context.Context, _ tool.Env, in TaskListInput) (tool.Result, error) {
			return s.taskList(ctx, c, in.StatusFilter)
		})
	send := subagent.CallerTool(s.svc, tool.Info{Name: "SendMessage", InputSchema: schema("send_message"), Description: prompt.Render(sendMessageTmpl(), nil), Access: tool.AccessAgent},
		func(ctx context.Context, env tool.Env, in SendMessageInput) (tool.Result, error) {
			return s.sendMessage(ctx, c, env, in)
		})
	return []tool.Tool{send, output, stop, list}
}

func (s *profile) taskOutput(ctx context.Context, c subagent.Caller, in TaskOutputInput) (tool.Result, error) {
	if in.TaskID == "" && in.BashID != "" {
		// BashOutput's call: it only looked, never waited.
		in.TaskID = in.BashID
		if in.Block == nil {
			in.Block = new(bool)
		}
	}
	filter, err := shell.Filter(in.Filter)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if err := s.svc.InTree(ctx, c, in.TaskID); err != nil {
		return tool.Errorf("%v", err), nil
	}
	r, err := s.svc.Read(ctx, in.TaskID)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	defer r.Close()
	if rec := r.Record(); filter != nil && rec.Kind != task.KindLocalBash {
		return tool.Errorf("filter applies to a background command's output; %s is a %s task", rec.ID, rec.Kind), nil
	}
	block := in.Block == nil || *in.Block
	wait := subagent.DefaultOutputWait
	if in.Timeout != nil {
		if *in.Timeout < 0 || time.Duration(*in.Timeout)*time.Millisecond > subagent.MaxOutputWait {
			return tool.Errorf("timeout must be between 0 and %d ms", subagent.MaxOutputWait.Milliseconds()), nil
		}
		wait = time.Duration(*in.Timeout) * time.Millisecond
	}
	if block {
		if err := r.Await(ctx, wait); err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, err
			}
			return tool.Errorf("%v", err), nil
		}
	}
	// Delivered once (deliver.go): a result the notification already
	// brought is not repeated.
	d := r.Claim(ctx)
	rec := r.Record()
	if rec.Kind == task.KindLocalBash {
		// A command's output is read, not delivered: it is shown each
		// time (its file keeps it); the read above only took the end
		// over from the notification.
		return shell.OutputResult(rec, filter), nil
	}
	var out string
	switch {
	case d != deliver.Show:
		out = "(" + strings.ToUpper(d.Note()[:1]) + d.Note()[1:] + ".)"
	case rec.Status.Terminal():
		out = rec.Result
		if rec.Error != "" {
			out = strings.TrimSpace(out + "\n\nError: " + rec.Error)
		}
	default:
		out = r.OutputTail(ctx, 8000)
	}
	return tool.Result{
		Content: []llm.Block{llm.Text(fmt.Sprintf("<task_id>%s</task_id>\n<task_type>%s</task_type>\n<status>%s</status>\n<note>%s</note>\n<output>\n%s\n</output>", rec.ID, rec.Kind, rec.Status, prompt.Untrusted, prompt.Escape(strings.TrimSpace(out))))},
		Meta:    map[string]any{"task_id": rec.ID, "status": string(rec.Status), "retrieval_status": deliver.Retrieval(rec.Status)},
	}, nil
}

func (s *profile) taskList(ctx context.Context, c subagent.Caller, filter string) (tool.Result, error) {
	statuses, err := subagent.StatusFilter(filter)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	recs, err := s.svc.List(ctx, c, statuses)
	if err != nil {
		return tool.Result{}, err
	}
	if len(recs) == 0 {
		return tool.Text("No tasks."), nil
	}
	var b strings.Builder
	now := s.svc.Config().Now()
	for _, t := range recs {
		name := t.Agent
		if t.Kind == task.KindLocalBash {
			name = "shell: " + prompt.Clip(prompt.OneLine(t.Prompt), 80)
		}
		if t.Name != "" {
			name += " (" + t.Name + ")"
		}
		fmt.Fprintf(&b, "%s  %-9s  %s  %q  started %s ago", t.ID, t.Status, name, t.Description, now.Sub(t.Created).Round(time.Second))
		if t.Usage.Total() > 0 {
			fmt.Fprintf(&b, "  %d tokens", t.Usage.Total())
		}
		if t.Progress != "" && !t.Status.Terminal() {
			fmt.Fprintf(&b, "\n    progress: %s", prompt.Escape(t.Progress))
		}
		b.WriteString("\n")
	}
	return tool.Text(strings.TrimSpace(b.String())), nil
}

func (s *profile) sendMessage(ctx context.Context, c subagent.Caller, env tool.Env, in SendMessageInput) (tool.Result, error) {
	return s.svc.Message(ctx, c, env.ToolUseID, in.To, in.Message, in.Summary)
}
