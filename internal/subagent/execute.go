package subagent

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/announce"
	"github.com/cadre-dev/cadre/internal/fork"
	"github.com/cadre-dev/cadre/internal/heartbeat"
	"github.com/cadre-dev/cadre/internal/lane"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/mailbox"
	"github.com/cadre-dev/cadre/internal/progress"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/remote"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/subagent/childsetup"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/notify"
	"github.com/cadre-dev/cadre/internal/subagent/pending"
	"github.com/cadre-dev/cadre/internal/subagent/remoteagent"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/llm"
)

// A run from its launch to its end: the child's conversation, the
// heartbeat of a background run, and finish, which records the end in the
// order S-L6 demands.

// start runs r: at once in the foreground or when launch took its lane
// slot, else once the lane hands it one. Until then no goroutine waits for
// it; a context that ends first (a stop, its group's end, its run timeout)
// drops it from the lane and records it killed.
func (s *Service) start(ctx context.Context, t *liveTask, r *run) {
	// The run's span covers it all, a wait for a background place
	// included; ctx carries the spawning call's span (launch).
	ctx, span := s.cfg.Tracer.StartRun(ctx, s.runSpan(r))
	ctx, stopTimer := runs.WithTimeout(ctx, s.cfg.Settings.RunTimeoutSeconds, r.req.RunTimeout)
	g := r.c.Group
	if !t.IsBackground() || t.laneHeld {
		g.Go(func() {
			defer stopTimer()
			s.execute(ctx, span, t, r)
		})
		return
	}
	// The run's place in its group is taken now; whichever of the two
	// below gets the run gives it back.
	release := g.Hold()
	w := &lane.Waiter{}
	fired := make(chan struct{})
	unwatch := context.AfterFunc(ctx, func() {
		defer close(fired)
		if !s.lane.Drop(w) {
			return // started: its run sees the context end
		}
		defer release()
		defer stopTimer()
		s.neverStarted(ctx, span, t, r, ctx.Err())
	})
	w.Start = func() {
		defer release()
		defer stopTimer()
		if !unwatch() {
			<-fired // its check found the run started: wait until it returns
		}
		if err := s.ready(ctx, t, r); err != nil {
			s.lane.Release()
			s.neverStarted(ctx, span, t, r, err)
			return
		}
		t.laneHeld = true
		started := s.cfg.Now()
		t.Begin(started)
		if err := s.records.Started(ctx, t.ID, started); err != nil {
			s.log.WarnContext(ctx, "record that a background run started", "task_id", t.ID, "err", err)
		}
		s.execute(ctx, span, t, r)
	}
	s.lane.Wait(w)
}

// neverStarted records the end of a background run that never ran: its
// context ended while it waited for a lane slot, or it could not be made
// ready when it got one (err).
func (s *Service) neverStarted(ctx context.Context, span telemetry.Span, t *liveTask, r *run, err error) {
	defer r.releaseMCP()
	t.inbox.Close(ctx, false)
	res := &runner.Result{Outcome: &loop.Outcome{Subtype: loop.SubtypeExecution, Err: err}}
	status := session.StatusFailed
	if ctx.Err() != nil {
		status = session.StatusKilled
	}
	s.endSession(ctx, r.sess, status)
	s.settle(t, r, res)
	s.finish(ctx, t, res, context.Cause(ctx))
	span.EndRun(res.Usage, res.Err)
}

// execute runs a child to its end, then records how it ended. A
// background run holds its lane slot (t.laneHeld) and gives it back here.
func (s *Service) execute(ctx context.Context, span telemetry.Span, t *liveTask, r *run) {
	// The definition's own MCP servers live as long as this run.
	defer r.releaseMCP()
	var res *runner.Result
	defer func() {
		if res == nil {
			span.EndRun(llm.Usage{}, nil)
			return
		}
		span.EndRun(res.Usage, res.Err)
	}()
	// A run moved to the background holds a place in the lane too (foreground.go).
	defer func() {
		t.mu.Lock()
		slot := t.slot
		t.mu.Unlock()
		if slot != nil {
			s.lane.Leave(slot)
		}
	}()
	if t.laneHeld {
		defer s.lane.Release()
		r.c.Group.Go(func() { s.heartbeat(context.WithoutCancel(ctx), t) })
	}
	hooks := s.hooks(ctx, r, t.ID)
	spec := runner.Spec{
		Session: r.sess,
		Hooks:   hooks,
		Loop:    s.loopConfig(r.def, r.child, r.tools, r.sess.Info.ID, r.req.Fork, hooks),
		Tag: runner.Tag{
			RootSessionID: r.c.RootSessionID, ParentToolUseID: t.AgentCall,
			AgentID: t.ID, AgentType: r.def.Name, TaskDescription: r.req.Description, AgentColor: r.def.Color,
		},
		Cost:          func(u llm.Usage) llm.Cost { return s.cfg.Pricing.Cost(r.child.caller.Ref, u) },
		Totals:        r.c.Totals,
		PublishPrompt: true,
		Bus:           s.cfg.Bus,
		Now:           s.cfg.Now,
		Logger:        s.log,
	}
	var summaries *progress.Summarizer
	if ra, ok := r.child.caller.Model.(*remote.Agent); ok {
		// A remote agent's own status messages are its progress lines;
		// nothing is asked of it beyond its task (no summaries).
		ra.Observe(func(line string) { s.remoteRecorder().Progress(ctx, t.Live, line) })
		ra.Track(func(id string) { s.remoteRecorder().TaskID(ctx, t.Live, id) })
	} else {
		summaries = s.summarizer(t, r, spec.Loop)
	}
	spec.Observe = func(st loop.Step) {
		t.Observe(st)
		if st.Response != nil && t.IsBackground() {
			s.events.Progress(t.Live)
		}
		summaries.Observe(ctx, st)
	}
	spec.Loop.Inbox = func() []llm.Message {
		return queue.Messages(append(s.cfg.Queue.Take(t.ID), t.inbox.Take(ctx)...))
	}
	if r.req.Fork != nil || (r.req.History != nil && r.req.SessionID == "") {
		// A fork's transcript holds the conversation it continues, so it
		// can be resumed like any agent.
		spec.RecordHistory = true
	}
	conv := runner.Start(spec, r.history)
	input := []llm.Message{r.first}
	if r.req.Fork != nil {
		dir := ""
		if r.tree != nil {
			dir = r.child.cwd
		}
		input = []llm.Message{fork.Input(r.req.Fork, r.req.Prompt, dir)}
	}
	if extra := childsetup.SubagentStart(ctx, hooks); extra != "" {
		first := input[0]
		first.Content = append(slices.Clone(first.Content), llm.Text(extra))
		input[0] = first
	}
	// Each turn reports its own figures; the run's are their sums.
	var (
		usage    llm.Usage
		toolUses int
		cost     llm.Cost
		took     time.Duration
	)
	sum := func(tr *runner.Result) {
		usage, toolUses, cost, took = usage.Add(tr.Usage), toolUses+tr.ToolUses, cost.Add(tr.Cost), took+tr.Duration
	}
	idleBlocks := 0 // TeammateIdle blocks in a row (team.go)
	for {
		res = conv.Drain(ctx, input, s.Pending(r.child.caller), sum)
		if reason := s.teammateIdle(ctx, r, hooks, res, idleBlocks); reason != "" {
			idleBlocks++
			input = []llm.Message{llm.UserText(reason)}
			continue
		}
		// A message SendMessage queued after Drain last looked would be
		// lost: take what is left under the lock SendMessage queues under,
		// and either answer it or close the run to messages, so that
		// SendMessage resumes the agent instead.
		answer := res.Err == nil && ctx.Err() == nil
		var left []queue.Entry
		s.runs.Closing(t.ID, func() bool {
			if answer {
				left = s.cfg.Queue.Take(t.ID)
			}
			return t.inbox == nil && len(left) == 0
		})
		if t.inbox != nil && len(left) == 0 {
			// With a Mailbox, messages (this process's too) go there,
			// and its own lock does what the table's does above
			// (mailbox.go): the run is closed to them once its inbox is.
			left = t.inbox.Close(ctx, answer)
			s.runs.Closing(t.ID, func() bool { return len(left) == 0 })
		}
		if len(left) == 0 {
			break
		}
		input = queue.Messages(left)
	}
	res.Usage, res.ToolUses, res.Cost, res.Duration = usage, toolUses, cost, took
	status := runs.StatusOf(res, context.Cause(ctx))
	if _, isRemote := r.child.caller.Model.(*remote.Agent); t.IsBackground() && s.cfg.Settings.Announce == "summarize" && !isRemote {
		// The gateway's announce step (S-N2).
		info := r.sess.Info
		t.announced, t.skip = announce.Announce(ctx, conv, res, status, func() time.Duration { return s.cfg.Now().Sub(t.Started()) },
			announce.Session{Key: info.Key, ID: info.ID, TranscriptPath: info.TranscriptPath})
	}
	sessStatus := runs.SessionStatus(status)
	// A background run's session end is written with its task's
	// (internal/subagent/records).
	hold := t.IsBackground() && s.records.Joint()
	if hold {
		r.sess.Hold()
	}
	closeErr := conv.Close(sessStatus)
	if closeErr != nil && res.Err == nil {
		res.Err = closeErr
	}
	switch {
	case hold:
		t.sessionEnd, t.sess = r.sess.Held(), r.sess
	case closeErr == nil && r.sess.IsRecorded():
		// Finish wrote the record and left it in Info.
		t.SetRecorded(r.sess.Info)
	}
	s.settle(t, r, res)
	s.finish(ctx, t, res, context.Cause(ctx))
}

// remoteRecorder keeps what a remote agent's background run reports on its record.
func (s *Service) remoteRecorder() remoteagent.Recorder {
	return remoteagent.Recorder{Tasks: s.cfg.Tasks, Events: s.events, Log: s.log}
}

// heartbeat keeps t's record's heartbeat fresh and honours a stop
// requested through it (internal/heartbeat), until the run ends. Every
// background run has one, whether it started in the background or moved
// there; a dispatched run's figures go with it, for the stand-in on the
// node that launched it (dispatch.go).
func (s *Service) heartbeat(ctx context.Context, t *liveTask) {
	b := s.beater()
	r := heartbeat.Run{ID: t.ID, Done: t.Done(), Stop: func() { t.Cancel(runs.ErrStopped) }}
	if t.detached {
		r.Figures = t.figures
	}
	b.Beat(ctx, r)
}

// Pending is what reaches the agent c through the queue while any of its
// background runs goes on — their notifications, messages sent to it —
// for runner.Conversation.Drain (S-Q2; internal/subagent/pending).
func (s *Service) Pending(c Caller) runner.Pending {
	if c.Group == nil {
		c.Group = s.orphans
	}
	return pending.Pending{Queue: s.cfg.Queue, Group: c.Group, AgentID: c.AgentID, Inbox: func() *mailbox.Inbox {
		if t := s.live(c.AgentID); t != nil {
			return t.inbox
		}
		return nil
	}}
}

// finish records a run's end in the order S-L6 demands: the terminal status
// and result first, then the notification (exactly once), then cleanup.
//
// ctx is the run's: the writes outlive its cancellation.
func (s *Service) finish(ctx context.Context, t *liveTask, res *runner.Result, cause error) {
	ctx = context.WithoutCancel(ctx)
	status := runs.StatusOf(res, cause)
	text, _, toolUses, _ := t.Snapshot()
	if r := strings.TrimSpace(res.Result); r != "" {
		text = r
	}
	if t.announced != "" {
		text = t.announced
	}
	background := t.Finish(res, status, cause, s.cfg.Now(), text)
	if background {
		errText := runs.ErrorText(res, cause)
		// The write that records the end also claims the notified flag
		// when no reader watches the run (deliver.go): one write, not two.
		// A dispatched run's parent is in the process that launched it,
		// whose stand-in delivers the end (dispatch.go).
		claiming := !t.detached && s.desk.BeginEndClaim(t)
		won := false
		ev, _ := task.Ends(status) // StatusOf's are terminal
		end := func(rec *task.Task) (task.Event, error) {
			rec.Result, rec.Error = text, errText
			rec.Usage, rec.CostUSD, rec.ToolUses = res.Usage, res.Cost, toolUses
			rec.Finished = s.cfg.Now()
			if claiming {
				won, rec.Notified = !rec.Notified, true
			}
			return ev, nil
		}
		err := s.records.End(ctx, t.ID, t.sessionEnd, end)
		switch {
		case err != nil && t.sessionEnd != nil:
			won = false
		case err == nil && t.sess != nil:
			// The joint write ran the held update, which left the
			// record as stored in Info.
			t.SetRecorded(t.sess.Info)
		}
		var n, first *deliver.Notice
		switch {
		case errors.Is(err, task.ErrTransition):
			if rec, ok := s.desk.RecordedFirst(ctx, t.ID, err); ok {
				first = s.notification(t, rec.Status, rec.Result, rec.Error, rec.ToolUses, res)
			}
		case err != nil:
			// The end cannot be recorded before it is told (S-L6): it is
			// not told. TaskOutput still shows the run's output so far.
			s.log.WarnContext(ctx, "record a background task's end; its parent is not notified", "task_id", t.ID, "status", status, "err", err)
		default:
			n = s.notification(t, status, text, errText, toolUses, res)
		}
		if !t.detached {
			s.desk.Ended(ctx, t, claiming, won, n, first)
		}
	}
	if !background {
		s.events.ForegroundEnded(t.Info, status, text, toolUses, res)
	}
	// Forget the run before announcing its end, so whoever wakes on done
	// can continue the agent at once.
	s.untrack(t.ID)
	t.Retire()
	// Slow cleanup comes last (S-L6), after done, so that a blocked
	// TaskOutput never waits on it: cleanup "delete" archives the child
	// right after its notification; a timeout is never archived.
	if background && cmp.Or(t.Cleanup, s.cfg.Settings.Cleanup) == "delete" && status != task.StatusTimeout {
		if err := s.archiver().Archive(ctx, t.ID, t.ID, s.cfg.Now()); err != nil {
			s.log.WarnContext(ctx, "archive a finished child session (cleanup: delete)", "task_id", t.ID, "err", err)
		}
	}
}

// notification is background run t's notification (notify.Notification):
// a teammate's is its idle notice, and a child that answered
// ANNOUNCE_SKIP posts nothing.
func (s *Service) notification(t *liveTask, status task.Status, text, errText string, toolUses int, res *runner.Result) *deliver.Notice {
	return notify.Notification(s.events, t.Info, notify.End{
		Status: status, Text: text, Err: errText, ToolUses: toolUses, Result: res, Silent: t.skip,
		Idle: func(status task.Status, result string) (string, bool) { return s.teamNotice(t, status, result) },
	})
}

func (s *Service) track(t *liveTask) { s.runs.Track(t.ID, t.RootSessionID, t.Name, t) }

func (s *Service) untrack(id string) { s.runs.Untrack(id) }

// live returns the run with this id if it is in progress in this process.
func (s *Service) live(id string) *liveTask {
	t, _ := s.runs.Live(id)
	return t
}

// modelName is m's name, "" for none.
func modelName(m llm.Model) string {
	if m == nil {
		return ""
	}
	return m.Name()
}
