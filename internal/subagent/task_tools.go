package subagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The tools that talk to running agents (S-T1…S-T4), claude profile.

// TaskOutputInput is TaskOutput's input.
type TaskOutputInput struct {
	TaskID  string `json:"task_id" jsonschema:"The id of the task (the agentId of a background agent)"`
	Block   *bool  `json:"block,omitempty" jsonschema:"Wait for the task to finish (default true)"`
	Timeout *int   `json:"timeout,omitempty" jsonschema:"How long to wait, in milliseconds (default 30000, at most 600000)"`
}

// TaskStopInput is TaskStop's input; shell_id is its old name.
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

const (
	defaultOutputWait = 30 * time.Second
	maxOutputWait     = 600 * time.Second
)

func (s *Service) taskTools(c Caller) []tool.Tool {
	output := tool.New(tool.Info{Name: "TaskOutput", Description: render(taskOutputTmpl, nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(ctx context.Context, _ tool.Env, in TaskOutputInput) (tool.Result, error) {
			return s.taskOutput(ctx, c, in)
		})
	stop := tool.New(tool.Info{Name: "TaskStop", Description: render(taskStopTmpl, nil), Access: tool.AccessAgent},
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
	list := tool.New(tool.Info{Name: "TaskList", Description: render(taskListTmpl, nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(ctx context.Context, _ tool.Env, in TaskListInput) (tool.Result, error) {
			return s.taskList(ctx, c, in.StatusFilter)
		})
	send := tool.New(tool.Info{Name: "SendMessage", Description: render(sendMessageTmpl, nil), Access: tool.AccessAgent},
		func(ctx context.Context, env tool.Env, in SendMessageInput) (tool.Result, error) {
			return s.sendMessage(ctx, c, env, in)
		})
	return []tool.Tool{send, output, stop, list}
}

// find returns the task with this id: the live run if it is in this
// process, and the record if there is one.
func (s *Service) find(ctx context.Context, id string) (*liveTask, task.Task, error) {
	if err := task.ValidateID(id); err != nil {
		return nil, task.Task{}, fmt.Errorf("invalid task_id: %w", err)
	}
	lt := s.live(id)
	rec, err := s.cfg.Tasks.GetTask(ctx, id)
	if err != nil && !errors.Is(err, task.ErrNotFound) {
		return nil, task.Task{}, err
	}
	if err != nil && lt == nil {
		return nil, task.Task{}, fmt.Errorf("no task %q: task ids are the agentId of a background agent (TaskList lists them)", id)
	}
	if err != nil {
		// A foreground run has no record; describe it from memory.
		rec = task.Task{ID: id, Kind: task.KindLocalAgent, Agent: lt.agentType, Description: lt.description, Status: task.StatusRunning, OutputFile: lt.outputFile}
	}
	return lt, rec, nil
}

func (s *Service) taskOutput(ctx context.Context, c Caller, in TaskOutputInput) (tool.Result, error) {
	if err := s.inTree(ctx, c, in.TaskID); err != nil {
		return tool.Errorf("%v", err), nil
	}
	lt, rec, err := s.find(ctx, in.TaskID)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	block := in.Block == nil || *in.Block
	wait := defaultOutputWait
	if in.Timeout != nil {
		if *in.Timeout < 0 || time.Duration(*in.Timeout)*time.Millisecond > maxOutputWait {
			return tool.Errorf("timeout must be between 0 and %d ms", maxOutputWait.Milliseconds()), nil
		}
		wait = time.Duration(*in.Timeout) * time.Millisecond
	}
	var w *watcher
	if lt != nil {
		w = s.watch(lt)
		defer w.leave()
	}
	if block && !rec.Status.Terminal() {
		rec, err = s.awaitEnd(ctx, in.TaskID, w, wait)
		if err != nil {
			return tool.Result{}, err
		}
	}
	// Delivered once (deliver.go): a result the notification already
	// brought is not repeated.
	d := deliverShow
	if rec.Status.Terminal() {
		d = s.claim(ctx, rec.ID, lt)
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
		out = tail(lt.outputFile, 8000)
	default:
		out = tail(rec.OutputFile, 8000)
	}
	return tool.Result{
		Content: []llm.Block{llm.Text(fmt.Sprintf("<task_id>%s</task_id>\n<task_type>%s</task_type>\n<status>%s</status>\n<note>%s</note>\n<output>\n%s\n</output>", rec.ID, rec.Kind, rec.Status, untrustedNote, escapeTags(strings.TrimSpace(out))))},
		Meta:    map[string]any{"task_id": rec.ID, "status": string(rec.Status), "retrieval_status": retrieval(rec.Status)},
	}, nil
}

func retrieval(s task.Status) string {
	if s.Terminal() {
		return "success"
	}
	return "timeout"
}

// awaitEnd waits up to d for task id to end: on the run itself when it is
// in this process (w watches it), else by reading its record (it runs
// elsewhere).
func (s *Service) awaitEnd(ctx context.Context, id string, w *watcher, d time.Duration) (task.Task, error) {
	if w != nil {
		if !w.wait(ctx, d) && ctx.Err() != nil {
			return task.Task{}, ctx.Err()
		}
		if _, rec, err := s.find(context.Background(), id); err == nil {
			return rec, nil
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		rec, err := s.cfg.Tasks.GetTask(ctx, id)
		if err != nil || rec.Status.Terminal() {
			return rec, err
		}
		select {
		case <-tick.C:
		case <-timer.C:
			return rec, nil
		case <-ctx.Done():
			return task.Task{}, ctx.Err()
		}
	}
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = append([]byte("…"), b[len(b)-n:]...)
	}
	return string(b)
}

// Stop stops a running task (S-T3): at once when it runs in this process,
// else by asking the process that runs it through its record.
func (s *Service) Stop(ctx context.Context, id string) (string, error) {
	lt, rec, err := s.find(ctx, id)
	if err != nil {
		return "", err
	}
	if rec.Status.Terminal() {
		return "", fmt.Errorf("task %s is not running: it %s", id, rec.Status)
	}
	if lt == nil {
		if _, err := s.cfg.Tasks.UpdateTask(ctx, id, func(t *task.Task) error {
			if t.Status.Terminal() {
				return fmt.Errorf("task %s is not running: it %s", id, t.Status)
			}
			t.CancelRequested = true
			return nil
		}); err != nil {
			return "", err
		}
		return fmt.Sprintf("Asked the process running task %s (%s) to stop it.", id, rec.Description), nil
	}
	lt.cancel(errStopped)
	select {
	case <-lt.done:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return fmt.Sprintf("Stopped task %s (%s). Its partial result is kept.", id, rec.Description), nil
}

func (s *Service) taskList(ctx context.Context, c Caller, filter string) (tool.Result, error) {
	var statuses []task.Status
	switch filter {
	case "", "all":
	case "running":
		statuses = []task.Status{task.StatusPending, task.StatusRunning}
	case "completed":
		statuses = []task.Status{task.StatusCompleted}
	case "failed":
		statuses = []task.Status{task.StatusFailed, task.StatusTimeout}
	case "cancelled", "killed":
		statuses = []task.Status{task.StatusKilled}
	default:
		return tool.Errorf("unknown status_filter %q: want running, completed, failed, cancelled or all", filter), nil
	}
	recs, err := s.cfg.Tasks.ListTasks(ctx, task.Filter{RootSessionID: c.RootSessionID, Statuses: statuses, Limit: 50})
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
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	// Running: delivered at its next loop boundary, never mid-tool. The
	// run takes what is queued before it closes (execute), so queue under
	// the same lock.
	s.mu.Lock()
	lt := s.running[id]
	queued := lt != nil && !lt.closing
	if queued {
		s.cfg.Queue.Push(queue.Entry{Priority: queue.Next, Mode: queue.ModeMessage, Target: id, Message: llm.UserText(in.Message)})
	}
	s.mu.Unlock()
	if queued {
		return tool.Text(fmt.Sprintf("Message queued for agent %s; it will read it after its current step.", id)), nil
	}
	if lt != nil {
		// It is finishing: once it has, resume it.
		select {
		case <-lt.done:
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	}
	// Stopped or evicted: resume it from its transcript, in the background.
	r, err := s.begin(ctx, c, spawnRequest{ToolUseID: env.ToolUseID, Description: in.Summary, Prompt: in.Message, SessionID: id})
	if err != nil {
		return tool.Errorf("cannot reach agent %q: %v", in.To, err), nil
	}
	if rec, err := s.cfg.Tasks.GetTask(ctx, id); err == nil {
		r.req.Name = rec.Name
	}
	t, err := s.launch(r, true)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	return tool.Text(fmt.Sprintf("Agent %s was not running; it has been resumed in the background with your message and its earlier context. You will be notified when it finishes (output: %s).", id, t.outputFile)), nil
}

// inTree refuses an id that names a run of another session's tree: the
// task tools reach only the agents their own session started (any depth).
// An id found nowhere passes, for the callers' own "unknown" errors.
func (s *Service) inTree(ctx context.Context, c Caller, id string) error {
	root := ""
	if lt := s.live(id); lt != nil {
		root = lt.rootSessionID
	} else if rec, err := s.cfg.Tasks.GetTask(ctx, id); err == nil {
		root = rec.RootSessionID
	} else {
		// A foreground child has no task record: walk its sessions up.
		root = s.rootOf(ctx, id)
	}
	if root == "" || root == c.RootSessionID {
		return nil
	}
	return fmt.Errorf("%s belongs to another session's agents; only the agents this session started can be reached", id)
}

// rootOf is the main session of sessionID's run tree, "" when the chain of
// parents cannot be followed.
func (s *Service) rootOf(ctx context.Context, sessionID string) string {
	cur := sessionID
	// Deeper than any spawn depth cadre allows: a cycle ends here.
	for range 16 {
		info, err := s.cfg.Index.GetSession(ctx, cur)
		if err != nil {
			return ""
		}
		if info.ParentID == "" {
			return info.ID
		}
		cur = info.ParentID
	}
	return ""
}

// OwnOutput reports whether path (absolute, symbolic links resolved) is
// the output file of a task of sessionID's run tree: the file the launch
// text tells the model it may Read, although it lies outside the
// workspace. Another tree's output stays out of reach, as TaskOutput's
// does. It is the permission policy's ReadableFile.
func (s *Service) OwnOutput(ctx context.Context, sessionID, path string) bool {
	dir, err := filepath.EvalSymlinks(s.cfg.OutputDir)
	if err != nil || filepath.Dir(path) != dir {
		return false
	}
	id, ok := strings.CutSuffix(filepath.Base(path), outputSuffix)
	if !ok || task.ValidateID(id) != nil {
		return false
	}
	rec, err := s.cfg.Tasks.GetTask(ctx, id)
	if err != nil || rec.RootSessionID == "" {
		return false
	}
	return s.rootOf(ctx, sessionID) == rec.RootSessionID
}

// outputSuffix ends a task's output file name: <OutputDir>/<id>.output.
const outputSuffix = ".output"
