package subagent

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The harness profile (DESIGN §12): the Java harness's tool names, inputs
// and plain-text replies over the one spawn core.

//go:embed prompts/harness_*.md prompts/gateway_*.md
var profilePromptFS embed.FS

// profilePrompts holds the harness and gateway tool descriptions, each named
// after its file ("harness_agent_spawn.md").
var profilePrompts = template.Must(template.ParseFS(profilePromptFS, "prompts/harness_*.md", "prompts/gateway_*.md"))

func profilePrompt(name string, data any) string {
	return render(profilePrompts.Lookup(name), data)
}

// The harness spells ids with prefixes of its own; each is accepted back
// wherever an id is.
const (
	harnessTaskPrefix    = "task_"
	harnessSessionPrefix = "sub-"
	// harnessDefaultWait is agent_spawn's and agent_send's default
	// timeout_seconds, and wait_async_results'.
	harnessDefaultWait = 30
	harnessMaxWait     = 600
	// harnessMaxWaitIDs bounds wait_async_results' task_ids.
	harnessMaxWaitIDs = 50
)

// harnessKey is an agent's agent_key: agent:<type>:<session id>. (The
// child session's stored key has ":subagent:" in the middle; the harness
// form leaves it out.)
func harnessKey(agentType, id string) string { return "agent:" + agentType + ":" + id }

func harnessTaskID(id string) string    { return harnessTaskPrefix + id }
func harnessSessionID(id string) string { return harnessSessionPrefix + id }

// harnessRef undoes the harness' id decorations: task_<id>, sub-<id>,
// agent:<type>:<id> and the stored key agent:<type>:subagent:<id> all
// name <id>. agentType is the type an agent key names, if ref is one;
// decorated reports whether ref had any decoration.
func harnessRef(ref string) (id, agentType string, decorated bool) {
	ref = strings.TrimSpace(ref)
	if rest, ok := strings.CutPrefix(ref, "agent:"); ok {
		parts := strings.Split(rest, ":")
		switch {
		case len(parts) == 2:
			return parts[1], parts[0], true
		case len(parts) == 3 && parts[1] == "subagent":
			return parts[2], parts[0], true
		}
		return ref, "", false
	}
	if id, ok := strings.CutPrefix(ref, harnessTaskPrefix); ok {
		return id, "", true
	}
	if id, ok := strings.CutPrefix(ref, harnessSessionPrefix); ok {
		return id, "", true
	}
	return ref, "", false
}

// harnessTimeout reads a timeout_seconds: default 30, ≤ 0 means the
// background (0), at most 600.
func harnessTimeout(in *int) (int, error) {
	if in == nil {
		return harnessDefaultWait, nil
	}
	if *in > harnessMaxWait {
		return 0, fmt.Errorf("timeout_seconds must be at most %d, got %d", harnessMaxWait, *in)
	}
	return max(*in, 0), nil
}

// harnessReply is an agent's reply in the harness form: agent_key, agent_id
// and session_id, then a status and what goes with it. Notes (warnings)
// come before reply, which is last because it may span lines.
type harnessReply struct {
	agentType, id string
	status        string // ok, error, accepted, timeout_promoted
	taskID        string
	err           string
	notes         []string
	reply         string
	hasReply      bool
}

func (r harnessReply) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent_key: %s\nagent_id: %s\nsession_id: %s\nstatus: %s", harnessKey(r.agentType, r.id), r.agentType, harnessSessionID(r.id), r.status)
	if r.taskID != "" {
		fmt.Fprintf(&b, "\ntask_id: %s", harnessTaskID(r.taskID))
	}
	if r.err != "" {
		fmt.Fprintf(&b, "\nerror: %s", r.err)
	}
	for _, n := range r.notes {
		fmt.Fprintf(&b, "\nnote: %s", n)
	}
	if r.hasReply {
		fmt.Fprintf(&b, "\nreply: %s", escapeTags(r.reply))
	}
	return b.String()
}

func (r harnessReply) result() tool.Result {
	meta := map[string]any{
		"status": r.status, "agent_key": harnessKey(r.agentType, r.id), "agent_id": r.agentType,
		"session_id": harnessSessionID(r.id), "agentId": r.id,
	}
	if r.taskID != "" {
		meta["task_id"] = harnessTaskID(r.taskID)
	}
	return tool.Result{Content: []llm.Block{llm.Text(r.String())}, IsError: r.status == "error", Meta: meta}
}

// harnessErr is a reply for a call that started no agent.
func harnessErr(format string, args ...any) tool.Result {
	return tool.Errorf("Error: %s", fmt.Sprintf(format, args...))
}

// harnessFinal describes a run that ended while someone waited for it.
func harnessFinal(agentType, id string, res *runner.Result, status task.Status, notes []string) harnessReply {
	r := harnessReply{agentType: agentType, id: id, notes: notes}
	text := strings.TrimSpace(res.Result)
	switch {
	case status == task.StatusKilled:
		r.status, r.err = "error", "the agent was stopped before it finished (task_cancel or a stop of the session)"
	case status == task.StatusTimeout:
		r.status, r.err = "error", "the agent's run timed out"
	case res.Err != nil:
		r.status, r.err = "error", oneLine(res.Err.Error())
	default:
		r.status = "ok"
		if res.Subtype == loop.SubtypeMaxTurns {
			r.notes = append(r.notes, fmt.Sprintf("the agent reached its turn limit (%d) before finishing; the reply is its output so far", res.Turns))
		}
		if text == "" {
			text = "(The agent finished without a final message.)"
		}
	}
	// A failed run's partial output is worth keeping (S-L3).
	r.reply, r.hasReply = text, text != ""
	return r
}

// harnessProfile is one caller's harness tools; they share the labels the
// caller gave, so a label still names its agent after a foreground run
// ended (such runs leave no task record to find it by).
type harnessProfile struct {
	s *Service
	c Caller

	mu     sync.Mutex
	labels map[string]labelled // by lower-cased label: the newest agent given it
}

type labelled struct{ label, id string }

// AgentSpawnInput is agent_spawn's input.
type AgentSpawnInput struct {
	AgentID        string `json:"agent_id" jsonschema:"The agent to spawn: one of the agent ids agent_list shows"`
	Task           string `json:"task,omitempty" jsonschema:"The complete instructions for the agent"`
	Label          string `json:"label,omitempty" jsonschema:"A unique name to address the agent by with agent_send"`
	TimeoutSeconds *int   `json:"timeout_seconds,omitempty" jsonschema:"Seconds to wait for the reply before the agent goes on in the background (default 30, at most 600); 0 starts it in the background"`
}

// AgentSendInput is agent_send's input.
type AgentSendInput struct {
	AgentKey       string `json:"agent_key,omitempty" jsonschema:"The agent's full agent_key from agent_spawn's reply (agent:<agent_id>:<uuid>)"`
	Label          string `json:"label,omitempty" jsonschema:"The agent's label, instead of agent_key"`
	Message        string `json:"message" jsonschema:"The message"`
	TimeoutSeconds *int   `json:"timeout_seconds,omitempty" jsonschema:"Seconds to wait for the agent's reply (default 30, at most 600); 0 returns at once"`
}

// AgentListInput is agent_list's (empty) input.
type AgentListInput struct{}

// HarnessTaskOutputInput is task_output's input.
type HarnessTaskOutputInput struct {
	TaskID  string `json:"task_id" jsonschema:"The task_id (task_<uuid>)"`
	Block   *bool  `json:"block,omitempty" jsonschema:"Wait for the task to finish (default true); false only checks its status"`
	Timeout *int   `json:"timeout,omitempty" jsonschema:"How long to wait, in milliseconds (default 30000, at most 600000)"`
}

// HarnessTaskCancelInput is task_cancel's input.
type HarnessTaskCancelInput struct {
	TaskID string `json:"task_id" jsonschema:"The task_id of the task to cancel"`
}

// WaitAsyncResultsInput is wait_async_results' input.
type WaitAsyncResultsInput struct {
	TaskIDs        []string `json:"task_ids" jsonschema:"The task_ids to wait for"`
	WaitAll        *bool    `json:"wait_all,omitempty" jsonschema:"Wait for every task (default true); false returns when the first one finishes"`
	TimeoutSeconds *int     `json:"timeout_seconds,omitempty" jsonschema:"Seconds to wait at most (default 30, at most 600); 0 only reports"`
}

// harnessTools are the harness profile's tools for caller c.
func (s *Service) harnessTools(c Caller) []tool.Tool {
	if c.Group == nil {
		c.Group = s.orphans
	}
	h := &harnessProfile{s: s, c: c, labels: map[string]labelled{}}
	type row struct{ Name, Description string }
	var rows []row
	for _, d := range s.listed(c) {
		rows = append(rows, row{d.Name, oneLine(d.Description)})
	}
	spawn := tool.New(tool.Info{Name: "agent_spawn", Description: profilePrompt("harness_agent_spawn.md", map[string]any{"Agents": rows}), Access: tool.AccessAgent, ConcurrencySafe: true},
		h.spawn)
	spawn.TargetOf = func(_ tool.Env, in AgentSpawnInput) string { return in.AgentID }
	send := tool.New(tool.Info{Name: "agent_send", Description: profilePrompt("harness_agent_send.md", nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		h.send)
	list := tool.New(tool.Info{Name: "agent_list", Description: profilePrompt("harness_agent_list.md", nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(context.Context, tool.Env, AgentListInput) (tool.Result, error) { return h.agentList(), nil })
	output := tool.New(tool.Info{Name: "task_output", Description: profilePrompt("harness_task_output.md", nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		h.taskOutput)
	cancel := tool.New(tool.Info{Name: "task_cancel", Description: profilePrompt("harness_task_cancel.md", nil), Access: tool.AccessAgent},
		h.taskCancel)
	tasks := tool.New(tool.Info{Name: "task_list", Description: profilePrompt("harness_task_list.md", nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(ctx context.Context, _ tool.Env, in TaskListInput) (tool.Result, error) {
			return h.taskList(ctx, in.StatusFilter)
		})
	wait := tool.New(tool.Info{Name: "wait_async_results", Description: profilePrompt("harness_wait_async_results.md", nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		h.waitAsync)
	return []tool.Tool{spawn, send, list, output, cancel, tasks, wait}
}

func (h *harnessProfile) spawn(ctx context.Context, env tool.Env, in AgentSpawnInput) (tool.Result, error) {
	s, c := h.s, h.c
	if c.Depth+1 > s.depth {
		// The Java harness's exact words (MAX_SPAWN_DEPTH).
		return harnessErr("Maximum spawn depth exceeded (max=%d)", s.depth), nil
	}
	id := strings.TrimSpace(in.AgentID)
	if id == "" {
		return harnessErr("agent_id is required: one of %s", h.spawnable()), nil
	}
	if err := agent.ValidateName(id); err != nil {
		return harnessErr("invalid agent_id: %v", err), nil
	}
	if _, ok := s.cfg.Agents.Get(id); !ok {
		return harnessErr("unknown agent_id %q; you may spawn: %s", id, h.spawnable()), nil
	}
	if strings.TrimSpace(in.Task) == "" {
		return harnessErr("task is empty: say what agent %q should do", id), nil
	}
	timeout, err := harnessTimeout(in.TimeoutSeconds)
	if err != nil {
		return harnessErr("%v", err), nil
	}
	label := strings.TrimSpace(in.Label)
	if label != "" {
		if err := agent.ValidateName(label); err != nil {
			return harnessErr("invalid label %q: %v", label, err), nil
		}
		if err := h.labelFree(ctx, label, ""); err != nil {
			return harnessErr("%v", err), nil
		}
	}
	out, err := s.spawn(ctx, c, spawnRequest{
		ToolUseID: env.ToolUseID, Description: harnessDescription(label, in.Task), Prompt: in.Task,
		SubagentType: id, Name: label, Timeout: &timeout,
	})
	if err != nil {
		return harnessErr("%v", err), nil
	}
	if label != "" {
		h.remember(label, out.sessionID)
	}
	return harnessOutcome(ctx, out, timeout == 0 || out.def.Background)
}

// harnessOutcome turns a spawn's outcome into the harness reply.
// startedInBackground tells accepted (it never ran in the foreground) from
// timeout_promoted (the foreground wait let it go).
func harnessOutcome(ctx context.Context, o *outcome, startedInBackground bool) (tool.Result, error) {
	if o.launched {
		r := harnessReply{agentType: o.def.Name, id: o.sessionID, status: "timeout_promoted", taskID: o.sessionID, notes: o.warnings}
		if startedInBackground {
			r.status = "accepted"
		}
		return r.result(), nil
	}
	if ctx.Err() != nil {
		// The caller's turn was cancelled, and the child with it: the loop
		// reports the call as interrupted.
		return tool.Result{}, context.Cause(ctx)
	}
	o.task.mu.Lock()
	status := o.task.status
	o.task.mu.Unlock()
	return harnessFinal(o.def.Name, o.sessionID, o.res, status, o.warnings).result(), nil
}

// harnessDescription is a harness run's description (notifications, task
// lists): its label, else the start of its task.
func harnessDescription(label, task string) string {
	if label != "" {
		return label
	}
	return clip(task, 60)
}

func (h *harnessProfile) spawnable() string {
	var names []string
	for _, d := range h.s.listed(h.c) {
		names = append(names, d.Name)
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

func (h *harnessProfile) remember(label, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.labels[strings.ToLower(label)] = labelled{label, id}
}

// treeRuns are the runs of the caller's tree in progress in this process,
// foreground ones included (they have no task record yet).
func (s *Service) treeRuns(root string) []*liveTask {
	s.mu.Lock()
	var tree []*liveTask
	for _, t := range s.running {
		if t.rootSessionID == root {
			tree = append(tree, t)
		}
	}
	s.mu.Unlock()
	// A run whose end is recorded is finished, even while its goroutine
	// winds down.
	var out []*liveTask
	for _, t := range tree {
		t.mu.Lock()
		ended := t.final != nil
		t.mu.Unlock()
		if !ended {
			out = append(out, t)
		}
	}
	return out
}

// labelFree checks that no unfinished agent of the tree but except has the
// label, ignoring case.
func (h *harnessProfile) labelFree(ctx context.Context, label, except string) error {
	taken := func(id string) error {
		return fmt.Errorf("the label %q is taken by agent %s, which is still running; pick another label, or message it with agent_send", label, id)
	}
	for _, t := range h.s.treeRuns(h.c.RootSessionID) {
		if t.id != except && strings.EqualFold(t.name, label) {
			return taken(harnessKey(t.agentType, t.id))
		}
	}
	recs, err := h.s.cfg.Tasks.ListTasks(ctx, task.Filter{RootSessionID: h.c.RootSessionID, Statuses: []task.Status{task.StatusPending, task.StatusRunning}})
	if err != nil {
		return err
	}
	for _, t := range recs {
		if t.ID != except && strings.EqualFold(t.Name, label) {
			return taken(harnessKey(t.Agent, t.ID))
		}
	}
	return nil
}

// byLabel finds the agent with this label: the running one if any, else
// the newest that had it.
func (h *harnessProfile) byLabel(ctx context.Context, label string) (string, error) {
	for _, t := range h.s.treeRuns(h.c.RootSessionID) {
		if strings.EqualFold(t.name, label) {
			return t.id, nil
		}
	}
	var ids []string
	h.mu.Lock()
	if l, ok := h.labels[strings.ToLower(label)]; ok {
		ids = append(ids, l.id)
	}
	h.mu.Unlock()
	recs, err := h.s.cfg.Tasks.ListTasks(ctx, task.Filter{RootSessionID: h.c.RootSessionID})
	if err != nil {
		return "", err
	}
	for _, t := range recs { // newest first
		if t.Name != "" && strings.EqualFold(t.Name, label) {
			ids = append(ids, t.ID)
			break
		}
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("no agent labelled %q in this session: pass the agent_key from agent_spawn's reply", label)
	}
	// Agent ids are time-ordered UUIDs: the greatest is the newest.
	return slices.Max(ids), nil
}

// target finds the agent agent_send names by agent_key or label, and its
// type.
func (h *harnessProfile) target(ctx context.Context, key, label string) (id, agentType string, err error) {
	key, label = strings.TrimSpace(key), strings.TrimSpace(label)
	switch {
	case key == "" && label == "":
		return "", "", errors.New("name the agent: pass agent_key (from agent_spawn's reply) or label")
	case key != "":
		var decorated bool
		id, agentType, decorated = harnessRef(key)
		if !decorated {
			// A label passed as agent_key is still understood.
			if lid, lerr := h.byLabel(ctx, key); lerr == nil {
				id = lid
			}
		}
	}
	if label != "" {
		lid, err := h.byLabel(ctx, label)
		if err != nil {
			return "", "", err
		}
		if id != "" && lid != id {
			return "", "", fmt.Errorf("agent_key %q and label %q name different agents; pass one of them", key, label)
		}
		id = lid
	}
	if err := session.ValidateID(id); err != nil {
		return "", "", fmt.Errorf("invalid agent_key %q: want the agent_key from agent_spawn's reply (agent:<agent_id>:<uuid>): %w", key, err)
	}
	if err := h.s.inTree(ctx, h.c, id); err != nil {
		return "", "", err
	}
	var actual string
	if lt := h.s.live(id); lt != nil {
		actual = lt.agentType
	} else {
		info, err := h.s.cfg.Index.GetSession(ctx, id)
		if errors.Is(err, session.ErrNotFound) || err == nil && info.ParentID == "" {
			return "", "", fmt.Errorf("no agent %q: pass the agent_key from agent_spawn's reply, or a label", cmp.Or(key, label))
		}
		if err != nil {
			return "", "", err
		}
		actual = info.Agent
	}
	if agentType != "" && !strings.EqualFold(agentType, actual) {
		return "", "", fmt.Errorf("agent_key %q names agent_id %q, but that session belongs to %q", key, agentType, actual)
	}
	return id, actual, nil
}

func (h *harnessProfile) send(ctx context.Context, env tool.Env, in AgentSendInput) (tool.Result, error) {
	s, c := h.s, h.c
	if strings.TrimSpace(in.Message) == "" {
		return harnessErr("message is empty"), nil
	}
	timeout, err := harnessTimeout(in.TimeoutSeconds)
	if err != nil {
		return harnessErr("%v", err), nil
	}
	id, agentType, err := h.target(ctx, in.AgentKey, in.Label)
	if err != nil {
		return harnessErr("%v", err), nil
	}
	// Running: delivered at its next loop boundary, never mid-tool. The run
	// takes what is queued before it closes to messages, so queue under the
	// same lock (as SendMessage does).
	s.mu.Lock()
	lt := s.running[id]
	queued := lt != nil && !lt.closing
	if queued {
		s.cfg.Queue.Push(queue.Entry{Priority: queue.Next, Mode: queue.ModeMessage, Target: id, Message: llm.UserText(in.Message)})
	}
	s.mu.Unlock()
	if queued {
		if timeout > 0 {
			if r, ok := h.awaitLive(ctx, lt, time.Duration(timeout)*time.Second); ok {
				return r.result(), nil
			}
			if ctx.Err() != nil {
				return tool.Result{}, context.Cause(ctx)
			}
		}
		return harnessReply{
			agentType: agentType, id: id, status: "accepted", taskID: id,
			notes: []string{"the agent is still running: your message is queued and it reads it after its current step"},
		}.result(), nil
	}
	if lt != nil {
		// It is finishing: once it has, resume it.
		select {
		case <-lt.done:
		case <-ctx.Done():
			return tool.Result{}, context.Cause(ctx)
		}
	}
	// Finished: resume it with the message and its earlier context.
	if c.Depth+1 > s.depth {
		// Resuming an agent is a spawn too.
		return harnessErr("Maximum spawn depth exceeded (max=%d)", s.depth), nil
	}
	name := h.labelOf(ctx, id)
	if name != "" && h.labelFree(ctx, name, id) != nil {
		name = "" // another running agent has taken the label since
	}
	out, err := s.spawn(ctx, c, spawnRequest{
		ToolUseID: env.ToolUseID, Description: harnessDescription(name, in.Message), Prompt: in.Message,
		SessionID: id, Name: name, Timeout: &timeout,
	})
	if err != nil {
		return harnessErr("cannot reach agent %s: %v", harnessKey(agentType, id), err), nil
	}
	return harnessOutcome(ctx, out, timeout == 0 || out.def.Background)
}

// awaitLive waits up to d for a running agent to end; ok reports that it
// did, and r is its reply. A background task's result is delivered once
// (deliver.go): one its notification already brought is not repeated.
func (h *harnessProfile) awaitLive(ctx context.Context, lt *liveTask, d time.Duration) (r harnessReply, ok bool) {
	// Watching makes the run hand its end to this wait instead of
	// notifying, as for a blocking task_output.
	w := h.s.watch(lt)
	defer w.leave()
	if !w.wait(ctx, d) {
		return r, false
	}
	lt.mu.Lock()
	res, status := lt.final, lt.status
	lt.mu.Unlock()
	r = harnessFinal(lt.agentType, lt.id, res, status, nil)
	if note := h.s.claim(ctx, lt.id, lt).note(); note != "" {
		r.err, r.reply, r.hasReply = "", "", false
		r.notes = append(r.notes, note)
	}
	return r, true
}

// labelOf is the label an agent was given, if any.
func (h *harnessProfile) labelOf(ctx context.Context, id string) string {
	if rec, err := h.s.cfg.Tasks.GetTask(ctx, id); err == nil && rec.Name != "" {
		return rec.Name
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.labels {
		if l.id == id {
			return l.label
		}
	}
	return ""
}

func (h *harnessProfile) agentList() tool.Result {
	defs := h.s.listed(h.c)
	if len(defs) == 0 {
		return tool.Text("No agents can be spawned from here.")
	}
	var b strings.Builder
	for _, d := range defs {
		fmt.Fprintf(&b, "%s: %s\n", d.Name, oneLine(d.Description))
	}
	return tool.Text(strings.TrimSpace(b.String()))
}

// harnessStatus is a task status in the harness's words: killed is
// cancelled there.
func harnessStatus(st task.Status) string {
	if st == task.StatusKilled {
		return "cancelled"
	}
	return string(st)
}

// taskReport describes a task in the harness form: the agent's three lines,
// task_id, status, then its result, error or output so far — or, for an
// ended task whose result this report must not show (deliver.go), the note
// that says where it went.
func taskReport(rec task.Task, lt *liveTask, d delivery) string {
	id := rec.ID
	var b strings.Builder
	fmt.Fprintf(&b, "agent_key: %s\nagent_id: %s\nsession_id: %s\ntask_id: %s\n", harnessKey(rec.Agent, id), rec.Agent, harnessSessionID(id), harnessTaskID(id))
	if rec.Name != "" {
		fmt.Fprintf(&b, "label: %s\n", rec.Name)
	}
	fmt.Fprintf(&b, "status: %s", harnessStatus(rec.Status))
	result := strings.TrimSpace(rec.Result)
	switch {
	case rec.Status.Terminal() && d != deliverShow:
		fmt.Fprintf(&b, "\nnote: %s", d.note())
	case rec.Status == task.StatusCompleted:
		if result == "" {
			result = "(The agent finished without a final message.)"
		}
		fmt.Fprintf(&b, "\nreply: %s", escapeTags(result))
	case rec.Status.Terminal():
		errText := oneLine(rec.Error)
		if errText == "" {
			errText = "the task " + harnessStatus(rec.Status)
		}
		fmt.Fprintf(&b, "\nerror: %s", errText)
		if result != "" {
			fmt.Fprintf(&b, "\nreply: %s", escapeTags(result))
		}
	default:
		file := rec.OutputFile
		if lt != nil {
			file = lt.outputFile
		}
		if out := strings.TrimSpace(tail(file, 8000)); out != "" {
			fmt.Fprintf(&b, "\noutput so far:\n%s", escapeTags(out))
		}
	}
	return b.String()
}

// finishedRecord describes a run that has ended in this process but has no
// record (it ended in the foreground).
func finishedRecord(lt *liveTask) task.Task {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	rec := task.Task{ID: lt.id, Kind: task.KindLocalAgent, Agent: lt.agentType, Name: lt.name, Description: lt.description, Status: lt.status, OutputFile: lt.outputFile, Result: lt.text}
	if lt.final != nil {
		if r := strings.TrimSpace(lt.final.Result); r != "" {
			rec.Result = r
		}
		if lt.final.Err != nil {
			rec.Error = lt.final.Err.Error()
		}
	}
	return rec
}

// lookup is s.find for an id in any harness form; it also finds a run that
// just ended in the foreground, given its live task.
func (h *harnessProfile) lookup(ctx context.Context, ref string, known *liveTask) (*liveTask, task.Task, error) {
	id, _, _ := harnessRef(ref)
	if err := h.s.inTree(ctx, h.c, id); err != nil {
		return nil, task.Task{}, err
	}
	lt, rec, err := h.s.find(ctx, id)
	if err != nil && known != nil && known.id == id {
		select {
		case <-known.done:
			return known, finishedRecord(known), nil
		default:
		}
	}
	if err == nil && rec.Agent == "" && lt != nil {
		rec.Agent = lt.agentType
	}
	if err == nil && rec.Name == "" && lt != nil {
		rec.Name = lt.name
	}
	return lt, rec, err
}

func (h *harnessProfile) taskOutput(ctx context.Context, _ tool.Env, in HarnessTaskOutputInput) (tool.Result, error) {
	lt, rec, err := h.lookup(ctx, in.TaskID, nil)
	if err != nil {
		return harnessErr("%v", err), nil
	}
	block := in.Block == nil || *in.Block
	wait := defaultOutputWait
	if in.Timeout != nil {
		if *in.Timeout < 0 || time.Duration(*in.Timeout)*time.Millisecond > maxOutputWait {
			return harnessErr("timeout must be between 0 and %d ms", maxOutputWait.Milliseconds()), nil
		}
		wait = time.Duration(*in.Timeout) * time.Millisecond
	}
	var w *watcher
	watched := lt
	if lt != nil {
		w = h.s.watch(lt)
		defer w.leave()
	}
	if block && !rec.Status.Terminal() {
		if _, err := h.s.awaitEnd(ctx, rec.ID, w, wait); err != nil && ctx.Err() != nil {
			return tool.Result{}, err
		}
		if lt, rec, err = h.lookup(ctx, rec.ID, lt); err != nil {
			return harnessErr("%v", err), nil
		}
	}
	d := deliverShow
	if rec.Status.Terminal() {
		d = h.s.claim(ctx, rec.ID, watched)
	}
	return tool.Result{
		Content: []llm.Block{llm.Text(taskReport(rec, lt, d))},
		Meta:    map[string]any{"task_id": harnessTaskID(rec.ID), "status": harnessStatus(rec.Status), "retrieval_status": retrieval(rec.Status)},
	}, nil
}

func (h *harnessProfile) taskCancel(ctx context.Context, _ tool.Env, in HarnessTaskCancelInput) (tool.Result, error) {
	id, _, _ := harnessRef(in.TaskID)
	if err := h.s.inTree(ctx, h.c, id); err != nil {
		return tool.Errorf("Error: %v", err), nil
	}
	local := h.s.live(id) != nil
	msg, err := h.s.Stop(ctx, id)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, err
		}
		return harnessErr("%v", err), nil
	}
	status := "cancelled"
	if !local {
		// It runs in another process, which stops it when it sees the request.
		status = "cancel_requested"
	}
	return tool.Text(fmt.Sprintf("task_id: %s\nstatus: %s\nnote: %s", harnessTaskID(id), status, msg)), nil
}

func (h *harnessProfile) taskList(ctx context.Context, filter string) (tool.Result, error) {
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
		return harnessErr("unknown status_filter %q: want running, completed, failed, cancelled or all", filter), nil
	}
	recs, err := h.s.cfg.Tasks.ListTasks(ctx, task.Filter{RootSessionID: h.c.RootSessionID, Statuses: statuses, Limit: 50})
	if err != nil {
		return tool.Result{}, err
	}
	if len(recs) == 0 {
		return tool.Text("No tasks."), nil
	}
	var b strings.Builder
	now := h.s.cfg.Now()
	for _, t := range recs {
		fmt.Fprintf(&b, "%s  %s  agent_id: %s", harnessTaskID(t.ID), harnessStatus(t.Status), t.Agent)
		if t.Name != "" {
			fmt.Fprintf(&b, "  label: %s", t.Name)
		}
		fmt.Fprintf(&b, "  %q  started %s ago", t.Description, now.Sub(t.Created).Round(time.Second))
		if t.Usage.Total() > 0 {
			fmt.Fprintf(&b, "  %d tokens", t.Usage.Total())
		}
		b.WriteString("\n")
	}
	return tool.Text(strings.TrimSpace(b.String())), nil
}

// waitAsync waits for several tasks: all of them, or the first to end, up
// to a timeout; then reports each one (S-T2's semantics, per task).
func (h *harnessProfile) waitAsync(ctx context.Context, _ tool.Env, in WaitAsyncResultsInput) (tool.Result, error) {
	s := h.s
	type entry struct {
		id  string
		lt  *liveTask
		rec task.Task
	}
	var entries []entry
	seen := map[string]bool{}
	for _, ref := range in.TaskIDs {
		lt, rec, err := h.lookup(ctx, ref, nil)
		if err != nil {
			return harnessErr("%v", err), nil
		}
		if !seen[rec.ID] {
			seen[rec.ID] = true
			entries = append(entries, entry{rec.ID, lt, rec})
		}
	}
	switch {
	case len(entries) == 0:
		return harnessErr("task_ids is empty: list the task_ids to wait for"), nil
	case len(entries) > harnessMaxWaitIDs:
		return harnessErr("too many task_ids (%d): at most %d at once", len(entries), harnessMaxWaitIDs), nil
	}
	waitAll := in.WaitAll == nil || *in.WaitAll
	timeout, err := harnessTimeout(in.TimeoutSeconds)
	if err != nil {
		return harnessErr("%v", err), nil
	}
	need := len(entries)
	if !waitAll {
		need = 1
	}
	finished := 0
	watchers := make([]*watcher, len(entries))
	for i, e := range entries {
		if e.rec.Status.Terminal() {
			finished++
		}
		if e.lt != nil {
			// Watched until reported: the runs hand their ends to this call.
			watchers[i] = s.watch(e.lt)
			defer watchers[i].leave()
		}
	}
	if finished < need && timeout > 0 {
		d := time.Duration(timeout) * time.Second
		wctx, cancel := context.WithCancel(ctx)
		ended := make(chan bool, len(entries)) // one per waiter: did its task end?
		var wg sync.WaitGroup
		waiting := 0
		for i, e := range entries {
			if e.rec.Status.Terminal() {
				continue
			}
			waiting++
			wg.Go(func() {
				rec, err := s.awaitEnd(wctx, e.id, watchers[i], d)
				terminal := err == nil && rec.Status.Terminal()
				if !terminal && e.lt != nil {
					// A foreground run leaves no record; its end is its done.
					select {
					case <-e.lt.done:
						terminal = true
					default:
					}
				}
				ended <- terminal
			})
		}
		timer := time.NewTimer(d)
	wait:
		for finished < need && waiting > 0 {
			select {
			case ok := <-ended:
				waiting--
				if ok {
					finished++
				}
			case <-timer.C:
				break wait
			case <-ctx.Done():
				break wait
			}
		}
		timer.Stop()
		cancel()
		wg.Wait()
		if ctx.Err() != nil {
			return tool.Result{}, context.Cause(ctx)
		}
	}
	// Report everything as it stands now, fresh.
	finished = 0
	reports := make([]string, len(entries))
	statuses := map[string]string{}
	for i, e := range entries {
		lt, rec, err := h.lookup(ctx, e.id, e.lt)
		if err != nil {
			lt, rec = e.lt, e.rec
		}
		d := deliverShow
		if rec.Status.Terminal() {
			finished++
			d = s.claim(ctx, rec.ID, e.lt)
		}
		reports[i] = taskReport(rec, lt, d)
		statuses[harnessTaskID(rec.ID)] = harnessStatus(rec.Status)
	}
	mode := "all"
	if !waitAll {
		mode = "first"
	}
	head := fmt.Sprintf("wait: %s\nfinished: %d of %d\ntimed_out: %t", mode, finished, len(entries), finished < need)
	return tool.Result{
		Content: []llm.Block{llm.Text(head + "\n\n" + strings.Join(reports, "\n---\n"))},
		Meta:    map[string]any{"finished": finished, "total": len(entries), "timed_out": finished < need, "statuses": statuses},
	}, nil
}
