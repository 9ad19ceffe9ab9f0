package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The harness profile (DESIGN §12): the Java harness's tool names, inputs
// and plain-text replies over the one spawn core.

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
		fmt.Fprintf(&b, "\nreply: %s", prompt.Escape(r.reply))
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
		r.status, r.err = "error", prompt.OneLine(res.Err.Error())
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
	s *profile
	c subagent.Caller

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

// profile is the harness profile of one Service.
type profile struct{ svc *subagent.Service }

// New is the harness profile on svc (subagent.NewProfile).
func New(svc *subagent.Service) subagent.Profile { return &profile{svc: svc} }

// Tools are All of them for a caller that may spawn. As the Java harness
// does, a leaf is offered agent_spawn too, which answers with the
// profile's documented error ("Maximum spawn depth exceeded"); task rules
// that end in "*": deny remove them all.
func (s *profile) Tools(c subagent.Caller) []tool.Tool {
	if s.svc.SpawnRemoved(c) {
		return nil
	}
	if !s.svc.MaySpawn(c) {
		return s.All(c)[:1] // agent_spawn alone: it only refuses
	}
	return s.All(c)
}

// SpawnTool is agent_spawn.
func (s *profile) SpawnTool() string { return "agent_spawn" }

// ShellCalls are task_output and task_cancel, with the harness' task id.
func (s *profile) ShellCalls(id string) (output, stop string) {
	return fmt.Sprintf("task_output with task_id %q (block: false to look without waiting)", harnessTaskID(id)),
		fmt.Sprintf("task_cancel with task_id %q", harnessTaskID(id))
}

// All are the harness profile's tools for caller c, whatever c may spawn.
func (s *profile) All(c subagent.Caller) []tool.Tool {
	h := &harnessProfile{s: s, c: c, labels: map[string]labelled{}}
	type row struct{ Name, Description string }
	var rows []row
	for _, d := range s.svc.Listed(c) {
		rows = append(rows, row{d.Name, prompt.OneLine(d.Description)})
	}
	spawn := subagent.CallerTool(s.svc, tool.Info{Name: "agent_spawn", Description: profilePrompt("harness_agent_spawn.md", map[string]any{"Agents": rows}), Access: tool.AccessAgent, ConcurrencySafe: true},
		h.spawn)
	spawn.TargetOf = func(_ tool.Env, in AgentSpawnInput) string { return in.AgentID }
	send := subagent.CallerTool(s.svc, tool.Info{Name: "agent_send", Description: profilePrompt("harness_agent_send.md", nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		h.send)
	list := subagent.CallerTool(s.svc, tool.Info{Name: "agent_list", Description: profilePrompt("harness_agent_list.md", nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(context.Context, tool.Env, AgentListInput) (tool.Result, error) { return h.agentList(), nil })
	output := subagent.CallerTool(s.svc, tool.Info{Name: "task_output", Description: profilePrompt("harness_task_output.md", nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		h.taskOutput)
	cancel := subagent.CallerTool(s.svc, tool.Info{Name: "task_cancel", Description: profilePrompt("harness_task_cancel.md", nil), Access: tool.AccessAgent},
		h.taskCancel)
	tasks := subagent.CallerTool(s.svc, tool.Info{Name: "task_list", Description: profilePrompt("harness_task_list.md", nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		func(ctx context.Context, _ tool.Env, in TaskListInput) (tool.Result, error) {
			return h.taskList(ctx, in.StatusFilter)
		})
	wait := subagent.CallerTool(s.svc, tool.Info{Name: "wait_async_results", Description: profilePrompt("harness_wait_async_results.md", nil), Access: tool.AccessAgent, ConcurrencySafe: true},
		h.waitAsync)
	return []tool.Tool{spawn, send, list, output, cancel, tasks, wait}
}

func (h *harnessProfile) spawn(ctx context.Context, env tool.Env, in AgentSpawnInput) (tool.Result, error) {
	s, c := h.s, h.c
	if c.Depth+1 > s.svc.Depth() {
		// The Java harness's exact words (MAX_SPAWN_DEPTH).
		return harnessErr("Maximum spawn depth exceeded (max=%d)", s.svc.Depth()), nil
	}
	id := strings.TrimSpace(in.AgentID)
	if id == "" {
		return harnessErr("agent_id is required: one of %s", h.spawnable()), nil
	}
	if err := agent.ValidateName(id); err != nil {
		return harnessErr("invalid agent_id: %v", err), nil
	}
	if _, ok := s.svc.Config().Agents.Get(id); !ok {
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
	out, err := s.svc.Spawn(ctx, c, subagent.SpawnRequest{
		ToolUseID: env.ToolUseID, Description: harnessDescription(label, in.Task), Prompt: in.Task,
		SubagentType: id, Name: label, Timeout: &timeout,
	})
	if err != nil {
		return harnessErr("%v", err), nil
	}
	if label != "" {
		h.remember(label, out.SessionID())
	}
	return harnessOutcome(ctx, out, timeout == 0 || out.Def().Background)
}

// harnessOutcome turns a spawn's outcome into the harness reply.
// startedInBackground tells accepted (it never ran in the foreground) from
// timeout_promoted (the foreground wait let it go).
func harnessOutcome(ctx context.Context, o *subagent.Outcome, startedInBackground bool) (tool.Result, error) {
	if o.Launched() {
		r := harnessReply{agentType: o.Def().Name, id: o.SessionID(), status: "timeout_promoted", taskID: o.SessionID(), notes: o.Warnings()}
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
	_, status, _ := o.Run().End()
	return harnessFinal(o.Def().Name, o.SessionID(), o.Result(), status, o.Warnings()).result(), nil
}

// harnessDescription is a harness run's description (notifications, task
// lists): its label, else the start of its task.
func harnessDescription(label, task string) string {
	if label != "" {
		return label
	}
	return prompt.Clip(task, 60)
}

func (h *harnessProfile) spawnable() string {
	var names []string
	for _, d := range h.s.svc.Listed(h.c) {
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

// labelFree checks that no unfinished agent of the tree but except has the
// label, ignoring case.
func (h *harnessProfile) labelFree(ctx context.Context, label, except string) error {
	taken := func(id string) error {
		return fmt.Errorf("the label %q is taken by agent %s, which is still running; pick another label, or message it with agent_send", label, id)
	}
	for _, t := range h.s.svc.TreeRuns(h.c.RootSessionID) {
		if a := t; a.ID != except && strings.EqualFold(a.Name, label) {
			return taken(harnessKey(a.AgentType, a.ID))
		}
	}
	recs, err := h.s.svc.Config().Tasks.ListTasks(ctx, task.Filter{RootSessionID: h.c.RootSessionID, Statuses: []task.Status{task.StatusPending, task.StatusRunning}})
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
	for _, t := range h.s.svc.TreeRuns(h.c.RootSessionID) {
		if a := t; strings.EqualFold(a.Name, label) {
			return a.ID, nil
		}
	}
	var ids []string
	h.mu.Lock()
	if l, ok := h.labels[strings.ToLower(label)]; ok {
		ids = append(ids, l.id)
	}
	h.mu.Unlock()
	recs, err := h.s.svc.Config().Tasks.ListTasks(ctx, task.Filter{RootSessionID: h.c.RootSessionID})
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
	if err := h.s.svc.InTree(ctx, h.c, id); err != nil {
		return "", "", err
	}
	var actual string
	if lt := h.s.svc.Running(id); lt != nil {
		actual = lt.About().AgentType
	} else {
		info, err := h.s.svc.Config().Index.GetSession(ctx, id)
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
	lt, queued, err := s.svc.Send(ctx, id, in.Message)
	if err != nil {
		return tool.Result{}, err
	}
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
	// Finished: resume it with the message and its earlier context.
	if c.Depth+1 > s.svc.Depth() {
		// Resuming an agent is a spawn too.
		return harnessErr("Maximum spawn depth exceeded (max=%d)", s.svc.Depth()), nil
	}
	name := h.labelOf(ctx, id)
	if name != "" && h.labelFree(ctx, name, id) != nil {
		name = "" // another running agent has taken the label since
	}
	out, err := s.svc.Spawn(ctx, c, subagent.SpawnRequest{
		ToolUseID: env.ToolUseID, Description: harnessDescription(name, in.Message), Prompt: in.Message,
		SessionID: id, Name: name, Timeout: &timeout,
	})
	if err != nil {
		return harnessErr("cannot reach agent %s: %v", harnessKey(agentType, id), err), nil
	}
	return harnessOutcome(ctx, out, timeout == 0 || out.Def().Background)
}

// AwaitReply is agent_send's wait for run, the agent c's message went to:
// up to d for it to end; ok reports that it did, and reply is its reply
// as agent_send words it.
func (s *profile) AwaitReply(ctx context.Context, c subagent.Caller, run *subagent.Running, d time.Duration) (reply string, ok bool) {
	h := &harnessProfile{s: s, c: c, labels: map[string]labelled{}}
	r, ok := h.awaitLive(ctx, run, d)
	return r.String(), ok
}

// awaitLive waits up to d for a running agent to end; ok reports that it
// did, and r is its reply. A background task's result is delivered once
// (deliver.go): one its notification already brought is not repeated.
func (h *harnessProfile) awaitLive(ctx context.Context, lt *subagent.Running, d time.Duration) (r harnessReply, ok bool) {
	// Watching makes the run hand its end to this wait instead of
	// notifying, as for a blocking task_output.
	rd := h.s.svc.ReadRunning(lt)
	defer rd.Close()
	if err := rd.Await(ctx, d); err != nil || !rd.Ended() {
		return r, false
	}
	res, status, _ := lt.End()
	a := lt.About()
	r = harnessFinal(a.AgentType, a.ID, res, status, nil)
	if note := rd.Claim(ctx).Note(); note != "" {
		r.err, r.reply, r.hasReply = "", "", false
		r.notes = append(r.notes, note)
	}
	return r, true
}

// labelOf is the label an agent was given, if any.
func (h *harnessProfile) labelOf(ctx context.Context, id string) string {
	if rec, err := h.s.svc.Config().Tasks.GetTask(ctx, id); err == nil && rec.Name != "" {
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
	defs := h.s.svc.Listed(h.c)
	if len(defs) == 0 {
		return tool.Text("No agents can be spawned from here.")
	}
	var b strings.Builder
	for _, d := range defs {
		fmt.Fprintf(&b, "%s: %s\n", d.Name, prompt.OneLine(d.Description))
	}
	return tool.Text(strings.TrimSpace(b.String()))
}
