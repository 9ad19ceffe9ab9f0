package subagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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

func (s *Service) taskTools(c Caller) []tool.Tool {
	output := protoTool(s, tool.Info{Name: "TaskOutput", Aliases: []string{"BashOutput"}, InputSchema: schema("task_output"), Description: render(taskOutputTmpl(), nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(ctx context.Context, _ tool.Env, in TaskOutputInput) (tool.Result, error) {
			return s.taskOutput(ctx, c, in)
		})
	stop := protoTool(s, tool.Info{Name: "TaskStop", Aliases: []string{"KillShell"}, InputSchema: schema("task_stop"), Description: render(taskStopTmpl(), nil), Access: tool.AccessAgent},
		func(ctx context.Context, _ tool.Env, in TaskStopInput) (tool.Result, error) {
			id := in.TaskID
			if id == "" {
				id = in.ShellID
			}
			if err := s.inTree(ctx, c, id); err != nil {
				return tool.Errorf("%v", err), nil
			}
			msg, err := s.Stop(ctx, id)
			if err != nil {
				return tool.Errorf("%v", err), nil
			}
			return tool.Text(msg), nil
		})
	list := protoTool(s, tool.Info{Name: "TaskList", InputSchema: schema("task_list"), Description: render(taskListTmpl(), nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(ctx context.Context, _ tool.Env, in TaskListInput) (tool.Result, error) {
			return s.taskList(ctx, c, in.StatusFilter)
		})
	send := protoTool(s, tool.Info{Name: "SendMessage", InputSchema: schema("send_message"), Description: render(sendMessageTmpl(), nil), Access: tool.AccessAgent},
		func(ctx context.Context, env tool.Env, in SendMessageInput) (tool.Result, error) {
			return s.sendMessage(ctx, c, env, in)
		})
	return []tool.Tool{send, output, stop, list}
}

func (s *Service) taskOutput(ctx context.Context, c Caller, in TaskOutputInput) (tool.Result, error) {
	if in.TaskID == "" && in.BashID != "" {
		// BashOutput's call: it only looked, never waited.
		in.TaskID = in.BashID
		if in.Block == nil {
			in.Block = new(bool)
		}
	}
	filter, err := shellFilter(in.Filter)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if err := s.inTree(ctx, c, in.TaskID); err != nil {
		return tool.Errorf("%v", err), nil
	}
	r, err := s.read(ctx, in.TaskID)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	defer r.close()
	if rec := r.record(); filter != nil && rec.Kind != task.KindLocalBash {
		return tool.Errorf("filter applies to a background command's output; %s is a %s task", rec.ID, rec.Kind), nil
	}
	block := in.Block == nil || *in.Block
	wait := defaultOutputWait
	if in.Timeout != nil {
		if *in.Timeout < 0 || time.Duration(*in.Timeout)*time.Millisecond > maxOutputWait {
			return tool.Errorf("timeout must be between 0 and %d ms", maxOutputWait.Milliseconds()), nil
		}
		wait = time.Duration(*in.Timeout) * time.Millisecond
	}
	if block {
		if err := r.await(ctx, wait); err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, err
			}
			return tool.Errorf("%v", err), nil
		}
	}
	// Delivered once (deliver.go): a result the notification already
	// brought is not repeated.
	d := r.claim(ctx)
	lt, rec := r.live(), r.record()
	if rec.Kind == task.KindLocalBash {
		// A command's output is read, not delivered: it is shown each
		// time (its file keeps it); the read above only took the end
		// over from the notification.
		return s.shellOutputResult(rec, filter)
	}
	var out string
	switch {
	case d != deliverShow:
		out = "(" + strings.ToUpper(d.note()[:1]) + d.note()[1:] + ".)"
	case rec.Status.Terminal():
		out = rec.Result
		if rec.Error != "" {
			out = strings.TrimSpace(out + "\n\nError: " + rec.Error)
		}
	case lt != nil:
		out = lt.outputTail(8000)
	default:
		out = s.tail(ctx, rec, 8000)
	}
	return tool.Result{
		Content: []llm.Block{llm.Text(fmt.Sprintf("<task_id>%s</task_id>\n<task_type>%s</task_type>\n<status>%s</status>\n<note>%s</note>\n<output>\n%s\n</output>", rec.ID, rec.Kind, rec.Status, untrustedNote, escapeTags(strings.TrimSpace(out))))},
		Meta:    map[string]any{"task_id": rec.ID, "status": string(rec.Status), "retrieval_status": retrieval(rec.Status)},
	}, nil
}

func (s *Service) taskList(ctx context.Context, c Caller, filter string) (tool.Result, error) {
	statuses, err := statusFilter(filter)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	recs, err := s.list(ctx, c, statuses)
	if err != nil {
		return tool.Result{}, err
	}
	if len(recs) == 0 {
		return tool.Text("No tasks."), nil
	}
	var b strings.Builder
	now := s.cfg.Now()
	for _, t := range recs {
		name := t.Agent
		if t.Kind == task.KindLocalBash {
			name = "shell: " + clip(oneLine(t.Prompt), 80)
		}
		if t.Name != "" {
			name += " (" + t.Name + ")"
		}
		fmt.Fprintf(&b, "%s  %-9s  %s  %q  started %s ago", t.ID, t.Status, name, t.Description, now.Sub(t.Created).Round(time.Second))
		if t.Usage.Total() > 0 {
			fmt.Fprintf(&b, "  %d tokens", t.Usage.Total())
		}
		if t.Progress != "" && !t.Status.Terminal() {
			fmt.Fprintf(&b, "\n    progress: %s", escapeTags(t.Progress))
		}
		b.WriteString("\n")
	}
	return tool.Text(strings.TrimSpace(b.String())), nil
}

// resolve finds the agent a SendMessage names: a name given at spawn time,
// or an agent id.
func (s *Service) resolve(ctx context.Context, c Caller, to string) (string, error) {
	to = strings.TrimSpace(to)
	if to == "" {
		return "", errors.New("to is empty: name the agent by its name or agentId")
	}
	recs, err := s.cfg.Tasks.ListTasks(ctx, task.Filter{RootSessionID: c.RootSessionID})
	if err != nil {
		return "", err
	}
	for _, t := range recs { // newest first: a reused name means the newest agent
		if t.Name != "" && strings.EqualFold(t.Name, to) {
			return t.ID, nil
		}
	}
	if err := task.ValidateID(to); err != nil {
		return "", fmt.Errorf("invalid agent id %q: %w", to, err)
	}
	return to, nil
}

func (s *Service) sendMessage(ctx context.Context, c Caller, env tool.Env, in SendMessageInput) (tool.Result, error) {
	if strings.TrimSpace(in.Message) == "" {
		return tool.Errorf("message is empty"), nil
	}
	if strings.TrimSpace(in.Summary) == "" {
		return tool.Errorf("summary is required: a 5-10 word preview of the message"), nil
	}
	id, err := s.resolve(ctx, c, in.To)
	if err == nil {
		err = s.inTree(ctx, c, id)
	}
	if err == nil {
		err = s.refuseShell(ctx, id)
	}
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if _, queued, err := s.send(ctx, id, in.Message); err != nil {
		return tool.Result{}, err
	} else if queued {
		return tool.Text(fmt.Sprintf("Message queued for agent %s; it will read it after its current step.", id)), nil
	}
	// Stopped or evicted: resume it from its transcript, in the background.
	name, call := "", ""
	if rec, err := s.cfg.Tasks.GetTask(ctx, id); err == nil {
		name, call = rec.Name, rec.ToolUseID
	}
	req := spawnRequest{ToolUseID: env.ToolUseID, AgentCall: call, Description: in.Summary, Prompt: in.Message, SessionID: id, Name: name, Background: true}
	// A teammate woken from outside its team's tools (a front end's
	// message) stays a teammate; its team is read back first if an earlier
	// process led it.
	s.teamOf(c)
	req.Teammate = s.teammateNamed(c.RootSessionID, name, id)
	out, err := s.spawn(ctx, c, req)
	if err != nil {
		return tool.Errorf("cannot reach agent %q: %v", in.To, err), nil
	}
	where := out.task.about().OutputFile
	if where == "" {
		where = "TaskOutput " + id
	}
	return tool.Text(fmt.Sprintf("Agent %s was not running; it has been resumed in the background with your message and its earlier context. You will be notified when it finishes (output: %s).", id, where)), nil
}
