package subagent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// run is a child that passed every check and is ready to start.
type run struct {
	// tree is the run's git worktree (isolation: worktree), or nil.
	tree *worktree.Tree
	// reservations are released by launch (or by begin when it fails).
	reservations []string
	c            Caller
	req          spawnRequest
	def          agent.Definition
	child        *child
	sess         *session.Session
	history      []llm.Message
	tools        *tool.Set
	warnings     []string
}

// begin does everything a spawn needs before the child can run: routing,
// the spawn permission, depth and child limits, the child's settings, its
// session (new, or reopened to continue it) and its tool pool.
func (s *Service) begin(ctx context.Context, c Caller, req spawnRequest) (*run, error) {
	if strings.TrimSpace(req.Prompt) == "" {
		return nil, errors.New("prompt is empty: say what the agent should do")
	}
	var def agent.Definition
	var err error
	switch {
	case req.Fork != nil:
		def = forkDefinition()
	case req.SessionID != "":
		def, err = s.continued(ctx, c, &req)
	default:
		def, err = s.route(c, req.SubagentType)
	}
	if err != nil {
		return nil, err
	}
	if err := s.cfg.Policy.PermitSpawn(ctx, def.Name, c.TaskRules); err != nil {
		return nil, err
	}
	if c.Depth+1 > s.depth {
		return nil, fmt.Errorf("maximum spawn depth exceeded (max=%d): %s cannot spawn agents", s.depth, c.Agent)
	}
	ch, warnings, err := s.prepare(c, def, req)
	if err != nil {
		return nil, err
	}
	r := &run{c: c, req: req, def: def, child: ch, warnings: warnings}
	ok := false
	defer func() {
		if !ok {
			s.unreserve(r.reservations)
		}
	}()
	if key, err := s.reserveChild(c); err != nil {
		return nil, err
	} else if key != "" {
		r.reservations = append(r.reservations, key)
	}
	if req.Name != "" {
		key, err := s.reserveName(c.RootSessionID, req.Name, req.SessionID)
		if err != nil {
			return nil, err
		}
		r.reservations = append(r.reservations, key)
	}
	if req.SessionID != "" {
		if !s.reserve("session\x00"+req.SessionID, req.SessionID) {
			return nil, fmt.Errorf("agent %s is still running; send it a message with SendMessage, or wait for its result", req.SessionID)
		}
		r.reservations = append(r.reservations, "session\x00"+req.SessionID)
		if r.sess, r.history, err = s.cfg.Sessions.Open(ctx, req.SessionID); err != nil {
			return nil, err
		}
	} else if r.sess, err = s.create(ctx, c, def, ch.cwd); err != nil {
		return nil, err
	}
	if iso := cmpOr(req.Isolation, def.Isolation); iso == "worktree" {
		if err := s.isolate(ctx, r); err != nil {
			r.sess.Finish(context.Background(), session.StatusFailed, llm.Usage{}, 0, 0)
			return nil, err
		}
	}
	ch.caller.SessionID = r.sess.Info.ID
	ch.caller.AgentID = r.sess.Info.ID
	switch {
	case req.Fork != nil:
		r.history = forkHistory(req.Fork)
	case req.History != nil && req.SessionID == "":
		r.history = req.History
	}
	if r.tools, err = s.pool(def, ch, req.Fork, req.Tools); err != nil {
		r.sess.Finish(context.Background(), session.StatusFailed, llm.Usage{}, 0, 0)
		return nil, err
	}
	ok = true
	return r, nil
}

// reserve takes key unless it is taken, or unless a run with id (if not
// "") is in progress.
func (s *Service) reserve(key, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reserved[key] || (id != "" && s.running[id] != nil) {
		return false
	}
	s.reserved[key] = true
	return true
}

// reserveName takes a name for a spawn of the run tree: refused while a
// run of the tree (other than the agent being continued) has it or another
// spawn is taking it. Between the reservation and the run being tracked,
// one of the two always holds the name.
func (s *Service) reserveName(root, name, continuing string) (string, error) {
	key := "name\x00" + root + "\x00" + strings.ToLower(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reserved[key] {
		return "", fmt.Errorf("the name %q is being given to another agent right now; pick another name", name)
	}
	for _, t := range s.running {
		if t.rootSessionID == root && t.id != continuing && strings.EqualFold(t.name, name) && !t.closing {
			return "", fmt.Errorf("the name %q is taken by agent %s, which is still running; pick another name or message it with SendMessage", name, t.id)
		}
	}
	s.reserved[key] = true
	return key, nil
}

func (s *Service) unreserve(keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		delete(s.reserved, k)
	}
}

// launch starts r in the caller's group. A background run gets its task
// record before it starts, so nothing can finish a task that was never
// recorded.
func (s *Service) launch(r *run, background bool) (*liveTask, error) {
	id := r.sess.Info.ID
	t := &liveTask{
		id: id, parentAgentID: r.c.AgentID, parentSessionID: r.c.SessionID, rootSessionID: r.c.RootSessionID,
		toolUseID: r.req.ToolUseID, agentType: r.def.Name, description: r.req.Description, prompt: r.req.Prompt,
		name: r.req.Name, outputFile: filepath.Join(s.cfg.OutputDir, id+outputSuffix), depth: r.child.caller.Depth,
		started: s.cfg.Now(), done: make(chan struct{}), bgRequested: make(chan struct{}), background: background,
		group: r.c.Group, cleanup: r.req.Cleanup,
	}
	// The reservations end once the run is tracked (or failed to start):
	// from then on the run itself, and its record, hold the name and the
	// session.
	defer s.unreserve(r.reservations)
	out, err := openOutput(t.outputFile)
	if err != nil {
		r.sess.Finish(context.Background(), session.StatusFailed, llm.Usage{}, 0, 0)
		return nil, err
	}
	t.out = out
	if background {
		if err := s.record(t, task.StatusPending); err != nil {
			out.Close()
			r.sess.Finish(context.Background(), session.StatusFailed, llm.Usage{}, 0, 0)
			return nil, err
		}
	}
	ctx, cancel := context.WithCancelCause(r.c.Group.ctx)
	t.cancel = cancel
	s.track(t)
	s.adopt(r, t)
	r.c.Group.wg.Go(func() { s.execute(ctx, t, r) })
	return t, nil
}

// record writes (or rewrites, for a continued agent) t's task record and
// announces it.
func (s *Service) record(t *liveTask, status task.Status) error {
	rec := task.Task{
		ID: t.id, Kind: task.KindLocalAgent, Agent: t.agentType, Name: t.name, Description: t.description, Prompt: t.prompt,
		ParentSessionID: t.parentSessionID, RootSessionID: t.rootSessionID, ChildSessionID: t.id, ToolUseID: t.toolUseID,
		Status: status, OutputFile: t.outputFile, Owner: s.cfg.Owner, Heartbeat: s.cfg.Now(), Created: s.cfg.Now(),
	}
	if status == task.StatusRunning {
		rec.Started = t.started
	}
	ctx := context.Background()
	err := s.cfg.Tasks.CreateTask(ctx, rec)
	if err != nil {
		// A continued agent keeps its id: the record is reused, reset.
		if _, gerr := s.cfg.Tasks.GetTask(ctx, t.id); gerr != nil {
			return fmt.Errorf("record task %s: %w", t.id, err)
		}
		_, err = s.cfg.Tasks.UpdateTask(ctx, t.id, func(old *task.Task) error {
			created := old.Created
			*old = rec
			old.Created = created
			return nil
		})
		if err != nil {
			return fmt.Errorf("record task %s: %w", t.id, err)
		}
	}
	s.system(t.rootSessionID, "task_started", map[string]any{
		"task_id": t.id, "tool_use_id": t.toolUseID, "description": t.description, "subagent_type": t.agentType,
		"is_backgrounded": true, "spawn_depth": t.depth, "task_type": string(task.KindLocalAgent), "prompt": t.prompt,
	})
	return nil
}

// execute runs a child to its end, then records how it ended.
func (s *Service) execute(ctx context.Context, t *liveTask, r *run) {
	timeout := time.Duration(s.cfg.Settings.RunTimeoutSeconds) * time.Second
	if r.req.RunTimeout > 0 {
		timeout = r.req.RunTimeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, runTimeoutError{timeout, r.req.RunTimeout > 0})
		defer cancel()
	}
	// A run moved to the background holds a place in the lane too (wait.go).
	defer func() {
		t.mu.Lock()
		slot := t.slot
		t.mu.Unlock()
		if slot != nil {
			s.lane.leave(slot)
		}
	}()
	var res *runner.Result
	if t.isBackground() {
		if err := s.lane.acquire(ctx); err != nil {
			res = &runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeExecution, Err: err}}
			r.sess.Finish(context.Background(), session.StatusKilled, llm.Usage{}, 0, 0)
			s.settle(t, r, res)
			s.finish(t, res, context.Cause(ctx))
			return
		}
		defer s.lane.release()
		t.started = s.cfg.Now()
		s.cfg.Tasks.UpdateTask(context.Background(), t.id, func(rec *task.Task) error {
			rec.Status, rec.Started = task.StatusRunning, t.started
			return nil
		})
		r.c.Group.wg.Go(func() { s.heartbeat(t) })
	}
	spec := runner.Spec{
		Session: r.sess,
		Loop:    s.loopConfig(r.def, r.child, r.tools, r.sess.Info.ID, r.req.Fork),
		Tag: runner.Tag{
			RootSessionID: r.c.RootSessionID, ParentToolUseID: r.req.ToolUseID,
			AgentID: t.id, AgentType: r.def.Name, TaskDescription: r.req.Description,
		},
		Cost:          func(u llm.Usage) float64 { return s.cfg.Pricing.Cost(r.child.caller.Ref, u) },
		Totals:        r.c.Totals,
		PublishPrompt: true,
		Bus:           s.cfg.Bus,
		Now:           s.cfg.Now,
	}
	progress := s.newSummarizer(t, r, spec.Loop)
	spec.Observe = func(st loop.Step) {
		t.observe(st)
		if st.Response != nil && t.isBackground() {
			s.progress(t)
		}
		progress.observe(ctx, st)
	}
	spec.Loop.Inbox = func() []llm.Message { return messages(s.cfg.Queue.Take(t.id)) }
	if r.req.Fork != nil || (r.req.History != nil && r.req.SessionID == "") {
		// A fork's transcript holds the conversation it continues, so it
		// can be resumed like any agent.
		spec.RecordHistory = true
	}
	conv := runner.Start(spec, r.history)
	input := []llm.Message{llm.UserText(r.req.Prompt)}
	if r.req.Fork != nil {
		dir := ""
		if r.tree != nil {
			dir = r.child.cwd
		}
		input = []llm.Message{forkInput(r.req.Fork, r.req.Prompt, dir)}
	}
	// Each turn reports its own figures; the run's are their sums.
	var (
		usage    llm.Usage
		toolUses int
		cost     float64
		took     time.Duration
	)
	sum := func(tr *runner.Result) {
		usage, toolUses, cost, took = usage.Add(tr.Usage), toolUses+tr.ToolUses, cost+tr.Cost, took+tr.Duration
	}
	for {
		res = s.converse(ctx, conv, r.child.caller, input, sum)
		// A message SendMessage queued after converse last looked would be
		// lost: take what is left under the lock SendMessage queues under,
		// and either answer it or close the run to messages, so that
		// SendMessage resumes the agent instead.
		s.mu.Lock()
		var left []queue.Entry
		if res.Err == nil && ctx.Err() == nil {
			left = s.cfg.Queue.Take(t.id)
		}
		t.closing = len(left) == 0
		s.mu.Unlock()
		if len(left) == 0 {
			break
		}
		input = messages(left)
	}
	res.Usage, res.ToolUses, res.Cost, res.Duration = usage, toolUses, cost, took
	status := statusOf(res, context.Cause(ctx))
	if t.isBackground() && s.cfg.Settings.Announce == "summarize" {
		t.announced, t.skip = s.announce(ctx, conv, t, r, res, status)
	}
	sessStatus := session.StatusCompleted
	switch status {
	case task.StatusKilled:
		sessStatus = session.StatusKilled
	case task.StatusFailed, task.StatusTimeout:
		sessStatus = session.StatusFailed
	}
	if err := conv.Close(sessStatus); err != nil && res.Err == nil {
		res.Err = err
	}
	s.settle(t, r, res)
	s.finish(t, res, context.Cause(ctx))
}

// heartbeat honours a stop requested through the task's record — by `cadre
// tasks stop` or TaskStop in another process (S-X2) — and keeps the
// record's heartbeat fresh, until the run ends. Every background run has
// one, whether it started in the background or moved there.
func (s *Service) heartbeat(t *liveTask) {
	tick := time.NewTicker(s.cfg.WatchInterval)
	defer tick.Stop()
	for {
		select {
		case <-t.done:
			return
		case <-tick.C:
		}
		rec, err := s.cfg.Tasks.UpdateTask(context.Background(), t.id, func(rec *task.Task) error {
			if !rec.Status.Terminal() {
				rec.Heartbeat = s.cfg.Now()
			}
			return nil
		})
		if err == nil && rec.CancelRequested && !rec.Status.Terminal() {
			t.cancel(errStopped)
			return
		}
	}
}

// Converse runs turns until the agent has nothing left to answer: its
// input, then whatever reaches it through the queue — notifications of
// its own background runs, messages — while any of those runs still go on
// (S-Q2). after, if set, sees each turn's result.
func (s *Service) Converse(ctx context.Context, conv *runner.Conversation, c Caller, input []llm.Message, after func(*runner.Result)) *runner.Result {
	return s.converse(ctx, conv, c, input, after)
}

func (s *Service) converse(ctx context.Context, conv *runner.Conversation, c Caller, input []llm.Message, after func(*runner.Result)) *runner.Result {
	res := conv.Turn(ctx, input...)
	if after != nil {
		after(res)
	}
	for ctx.Err() == nil && res.Err == nil {
		entries := s.cfg.Queue.Take(c.AgentID)
		if len(entries) == 0 {
			changed := c.Group.Changed()
			if c.Group.Running(c.AgentID) == 0 {
				break
			}
			entries, _ = s.cfg.Queue.Wait(ctx, c.AgentID, changed)
			if len(entries) == 0 {
				continue
			}
		}
		res = conv.Turn(ctx, messages(entries)...)
		if after != nil {
			after(res)
		}
	}
	return res
}

func messages(entries []queue.Entry) []llm.Message {
	out := make([]llm.Message, len(entries))
	for i, e := range entries {
		out[i] = e.Message
	}
	return out
}

// finish records a run's end in the order S-L6 demands: the terminal status
// and result first, then the notification (exactly once), then cleanup.
func (s *Service) finish(t *liveTask, res *runner.Result, cause error) {
	status := statusOf(res, cause)
	text, _, toolUses, _ := t.snapshot()
	if r := strings.TrimSpace(res.Result); r != "" {
		text = r
	}
	if t.announced != "" {
		text = t.announced
	}
	t.mu.Lock()
	t.final, t.status = res, status
	background := t.background
	if t.out != nil {
		fmt.Fprintf(t.out, "\n[%s]\n%s\n", status, text)
		t.out.Close()
		t.out = nil
	}
	t.mu.Unlock()
	if background {
		errText := ""
		if res.Err != nil {
			errText = res.Err.Error()
			if cause != nil && !errors.Is(res.Err, cause) {
				errText = cause.Error()
			}
		}
		_, err := s.cfg.Tasks.UpdateTask(context.Background(), t.id, func(rec *task.Task) error {
			rec.Status, rec.Result, rec.Error = status, text, errText
			rec.Usage, rec.CostUSD, rec.ToolUses = res.Usage, res.Cost, toolUses
			rec.Finished = s.cfg.Now()
			return nil
		})
		if err == nil {
			s.notice(t, s.notification(t, status, text, errText, toolUses, res))
		}
	}
	// Forget the run before announcing its end, so whoever wakes on done
	// can continue the agent at once.
	s.untrack(t.id)
	t.group.remove(t.id)
	close(t.done)
	// Slow cleanup comes last (S-L6), after done, so that a blocked
	// TaskOutput never waits on it: cleanup "delete" archives the child
	// right after its notification; a timeout is never archived.
	if background && cmpOr(t.cleanup, s.cfg.Settings.Cleanup) == "delete" && status != task.StatusTimeout {
		s.archive(context.Background(), t.id, t.id, s.cfg.Now())
	}
}

// notification is a background run's notification: the queue entry for
// the agent that started it, and the task_notification line published once
// it is queued. A child that answered ANNOUNCE_SKIP posts nothing.
func (s *Service) notification(t *liveTask, status task.Status, text, errText string, toolUses int, res *runner.Result) *pendingNotice {
	verb := map[task.Status]string{
		task.StatusCompleted: "completed", task.StatusFailed: "failed", task.StatusKilled: "was stopped", task.StatusTimeout: "timed out",
	}[status]
	result := text
	if errText != "" {
		if result != "" {
			result += "\n\n"
		}
		result += "Error: " + errText
	}
	body := render(notificationTmpl, map[string]any{
		"ID": t.id, "ToolUseID": t.toolUseID, "OutputFile": t.outputFile, "Status": status,
		"Description": t.description, "Verb": verb, "Result": result,
		"Tokens": res.Usage.Total(), "ToolUses": toolUses, "Duration": res.Duration.Round(time.Millisecond), "Cost": res.Cost,
	})
	return &pendingNotice{
		entry:  queue.Entry{Priority: queue.Later, Mode: queue.ModeNotification, Target: t.parentAgentID, TaskID: t.id, Message: llm.UserText(body)},
		silent: t.skip,
		event: func() {
			s.system(t.rootSessionID, "task_notification", map[string]any{
				"task_id": t.id, "tool_use_id": t.toolUseID, "status": streamStatus(status), "output_file": t.outputFile,
				"summary": fmt.Sprintf("Agent %q %s", t.description, verb),
				"usage":   map[string]any{"total_tokens": res.Usage.Total(), "tool_uses": toolUses, "duration_ms": res.Duration.Milliseconds()},
			})
		},
	}
}

func (s *Service) progress(t *liveTask) {
	_, tokens, toolUses, last := t.snapshot()
	s.system(t.rootSessionID, "task_progress", map[string]any{
		"task_id": t.id, "tool_use_id": t.toolUseID, "description": t.description, "subagent_type": t.agentType,
		"usage":          map[string]any{"total_tokens": tokens, "tool_uses": toolUses, "duration_ms": s.cfg.Now().Sub(t.started).Milliseconds()},
		"last_tool_name": last,
	})
}

func (s *Service) system(rootSessionID, subtype string, fields map[string]any) {
	if s.cfg.Bus == nil {
		return
	}
	s.cfg.Bus.Publish(event.Event{Type: event.TypeSystem, Subtype: subtype, SessionID: rootSessionID, Time: s.cfg.Now(), UUID: newUUID(), Fields: fields})
}

func (s *Service) track(t *liveTask) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running[t.id] = t
}

func (s *Service) untrack(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.running, id)
}

// live returns the run with this id if it is in progress in this process.
func (s *Service) live(id string) *liveTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[id]
}
