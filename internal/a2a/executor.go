package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/cadre-dev/cadre"
)

// executor is the a2asrv.AgentExecutor: one task is one turn of a
// conversation of the main agent.
type executor struct{ s *Server }

// run is a task's conversation. The conversation is opened for the task's
// first message and lives until its turn's result (the task's end), across
// the input-required pauses in between; after that it is closed, and the
// background subagents it started still finish before it ends.
type run struct {
	s         *Server
	task      a2a.TaskID
	session   string
	conv      *cadre.Conversation
	approvals *cadre.Approvals
	done      chan struct{} // closed when the conversation has ended
	wake      chan struct{} // cap 1: events queued or the conversation ended
	// overCtx ends when the task does (finish): the conversation's input
	// closes then, and approvals asked from then on are refused.
	overCtx  context.Context
	overStop context.CancelFunc

	mu       sync.Mutex
	queue    []cadre.Event // read from the conversation, not yet translated
	ended    bool          // the conversation's events are over
	over     bool          // the task reached a terminal state
	canceled bool
	waiting  *cadre.Approval // the approval the task is input-required on
	started  map[string]bool // subagent task ids announced as started
}

// Execute runs the task's message: a new task opens (or resumes) the
// context's session and sends it; a message to a task that is
// input-required answers the pending approval.
func (e *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		s := e.s
		var r *run
		if ec.StoredTask != nil {
			r = s.run(ec.TaskID)
			if r == nil {
				yield(nil, fmt.Errorf("task %s: its conversation is over (the server restarted?); send a new message in context %s to continue the session: %w", ec.TaskID, ec.ContextID, a2a.ErrInvalidParams))
				return
			}
			if err := r.answer(ec.Message); err != nil {
				yield(nil, err)
				return
			}
			if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
				return
			}
		} else {
			text, err := messageText(ec.Message)
			if err != nil {
				yield(nil, err)
				return
			}
			if r, err = s.start(ctx, ec, text); err != nil {
				yield(nil, err)
				return
			}
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
				return
			}
		}
		r.pump(ctx, ec, yield)
	}
}

// Cancel stops the task's conversation: its turn and every subagent it
// started, background ones too. The canceled state is written first: when
// the task's execution is running, it goes through that execution's queue,
// which closes as soon as the execution writes a final state of its own
// (as stopping the conversation would make it do).
func (e *executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		r := e.s.run(ec.TaskID)
		if r != nil {
			r.mu.Lock()
			r.canceled = true
			r.mu.Unlock()
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, agentText(ec, "Canceled: the run and its subagents were stopped.")), nil)
		if r != nil {
			r.conv.Stop()
			r.finish()
		}
	}
}

// run is the live run of task id, nil when there is none.
func (s *Server) run(id a2a.TaskID) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id]
}

// start opens the conversation of ec's context for a new task and sends it
// text. One conversation of a session is open at a time: a task still
// going in the context is an error; one that is over but whose background
// subagents still run is waited for.
func (s *Server) start(ctx context.Context, ec *a2asrv.ExecutorContext, text string) (*run, error) {
	sid := SessionID(ec.ContextID)
	rt := s.cfg.Runtime
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, errors.New("the A2A server is shutting down")
		}
		prev, busy := s.contexts[sid], false
		if prev == nil {
			r := &run{s: s, task: ec.TaskID, session: sid, approvals: cadre.NewApprovals(),
				done: make(chan struct{}), wake: make(chan struct{}, 1), started: map[string]bool{}}
			r.overCtx, r.overStop = context.WithCancel(context.Background())
			// The context is taken now; the task is listed once its
			// conversation is open (open).
			s.contexts[sid] = r
			s.mu.Unlock()
			return r, r.open(ctx, rt, text)
		}
		prev.mu.Lock()
		busy = !prev.over
		prev.mu.Unlock()
		s.mu.Unlock()
		if busy {
			return nil, fmt.Errorf("context %s: task %s is still going in it; answer or cancel it first: %w", ec.ContextID, prev.task, a2a.ErrInvalidParams)
		}
		select {
		case <-prev.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// open opens the conversation (resuming the session when it exists),
// starts reading its events and sends text.
func (r *run) open(ctx context.Context, rt *cadre.Runtime, text string) error {
	s := r.s
	req := cadre.OpenRequest{Permission: r.ask, Model: s.cfg.Model, PermissionMode: s.cfg.PermissionMode}
	sess, _, err := rt.Session(ctx, r.session)
	switch {
	case err == nil && sess.ParentID != "":
		err = fmt.Errorf("context names session %s, a subagent's; continue its main session instead: %w", r.session, a2a.ErrInvalidParams)
	case err == nil:
		req.Resume = r.session
	case errors.Is(err, cadre.ErrNotFound):
		req.SessionID, err = r.session, nil
	}
	var conv *cadre.Conversation
	if err == nil {
		// The conversation outlives the request that started it: the
		// task goes on while its client reconnects or polls.
		conv, err = rt.Open(s.ctx, req)
	}
	if err == nil {
		s.mu.Lock()
		if s.closed {
			err = errors.New("the A2A server is shutting down")
		} else {
			r.conv = conv
			s.runs[r.task] = r
			// Started under s.mu while not closed, so Close waits for them.
			s.wg.Go(r.read)
			s.wg.Go(r.closer)
		}
		s.mu.Unlock()
		if err != nil {
			conv.Stop()
		}
	}
	if err != nil {
		r.overStop()
		r.forget()
		close(r.done)
		return fmt.Errorf("open session %s: %w", r.session, err)
	}
	if err := conv.Send(ctx, cadre.Message{Text: text}); err != nil {
		conv.Stop()
		r.finish()
		return fmt.Errorf("send the message: %w", err)
	}
	return nil
}

// ask is the conversation's PermissionFunc: the task's approvals, until
// the task is over; from then on (a background subagent still running
// after the answer) nobody is there to answer, and the request is refused.
func (r *run) ask(ctx context.Context, req cadre.PermissionRequest) (cadre.PermissionDecision, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(r.overCtx, cancel)()
	return r.approvals.Ask(ctx, req)
}

// closer closes the conversation's input once the task is over: it ends
// when its background subagents have.
func (r *run) closer() {
	select {
	case <-r.overCtx.Done():
		r.conv.Close()
	case <-r.done:
	}
}

// read moves the conversation's events to the queue the task's pump
// reads, until the conversation ends.
func (r *run) read() {
	defer close(r.done)
	defer r.overStop()
	defer r.forget()
	for ev, err := range r.conv.Events() {
		if err != nil {
			continue
		}
		r.mu.Lock()
		if !r.over {
			r.queue = append(r.queue, ev)
		}
		r.mu.Unlock()
		r.signal()
	}
	r.mu.Lock()
	r.ended = true
	r.mu.Unlock()
	r.signal()
}

func (r *run) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// forget drops the run from the server's maps.
func (r *run) forget() {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.s.runs[r.task] == r {
		delete(r.s.runs, r.task)
	}
	if r.s.contexts[r.session] == r {
		delete(r.s.contexts, r.session)
	}
}

// finish marks the task over and closes the conversation's input: it ends
// once its background subagents have.
func (r *run) finish() {
	r.mu.Lock()
	r.over, r.queue = true, nil
	r.mu.Unlock()
	r.overStop()
}

// take returns the events queued and whether the conversation has ended.
func (r *run) take() ([]cadre.Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	evs := r.queue
	r.queue = nil
	return evs, r.ended
}

// pump translates the conversation's events into the task's until the
// task ends or pauses for an approval.
func (r *run) pump(ctx context.Context, ec *a2asrv.ExecutorContext, yield func(a2a.Event, error) bool) {
	for {
		changed := r.approvals.Changed()
		evs, ended := r.take()
		for _, ev := range evs {
			out, final := r.translate(ec, ev)
			for _, o := range out {
				if !yield(o, nil) {
					return
				}
			}
			if final {
				return
			}
		}
		if len(evs) > 0 {
			continue
		}
		if p := r.approvals.Pending(); len(p) > 0 {
			r.mu.Lock()
			r.waiting = &p[0]
			r.mu.Unlock()
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, approvalMessage(ec, p[0])), nil)
			return
		}
		if ended {
			r.mu.Lock()
			canceled := r.canceled
			r.mu.Unlock()
			r.finish()
			if canceled {
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
			} else {
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, agentText(ec, "The conversation ended without an answer.")), nil)
			}
			return
		}
		select {
		case <-changed:
		case <-r.wake:
		case <-ctx.Done():
			return
		}
	}
}

// translate is the A2A events for a runtime event; final says the task
// ends with them.
func (r *run) translate(ec *a2asrv.ExecutorContext, ev cadre.Event) ([]a2a.Event, bool) {
	switch {
	case ev.Type == cadre.EventSystem && ev.Subtype == cadre.SubtypeTaskStarted && ev.Task != nil:
		t := ev.Task
		r.mu.Lock()
		again := r.started[t.TaskID]
		r.started[t.TaskID] = true
		r.mu.Unlock()
		verb := "started"
		if again {
			verb = "moved to the background"
		}
		msg := agentText(ec, fmt.Sprintf("Subagent %s %s: %s", t.AgentType, verb, t.Description))
		msg.Metadata = map[string]any{"cadre": map[string]any{
			"event": "subagent_started", "agentId": t.TaskID, "agentType": t.AgentType,
			"description": t.Description, "toolUseId": t.ToolUseID, "background": t.Background, "depth": t.SpawnDepth,
		}}
		return []a2a.Event{a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, msg)}, false
	case ev.Type == cadre.EventSystem && ev.Subtype == cadre.SubtypeTaskNotification && ev.Task != nil:
		t := ev.Task
		msg := agentText(ec, fmt.Sprintf("Subagent %s: %s", t.TaskID, t.Summary))
		msg.Metadata = map[string]any{"cadre": map[string]any{
			"event": "subagent_finished", "agentId": t.TaskID, "status": string(t.Status),
			"toolUseId": t.ToolUseID, "summary": t.Summary,
		}}
		return []a2a.Event{a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, msg)}, false
	case ev.Type == cadre.EventResult && ev.Result != nil:
		return r.result(ec, ev.Result)
	}
	return nil, false
}

// result ends the task with the turn's outcome: the answer as an artifact,
// then completed; or failed (canceled when Cancel stopped it).
func (r *run) result(ec *a2asrv.ExecutorContext, res *cadre.ResultInfo) ([]a2a.Event, bool) {
	r.mu.Lock()
	canceled := r.canceled
	r.mu.Unlock()
	r.finish()
	if canceled {
		return []a2a.Event{a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil)}, true
	}
	if res.IsError {
		why := strings.Join(res.Errors, "; ")
		if why == "" {
			why = res.Result
		}
		if why == "" {
			why = "the run failed"
		}
		return []a2a.Event{a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, agentText(ec, why))}, true
	}
	parts := a2a.ContentParts{a2a.NewTextPart(res.Result)}
	if len(res.StructuredOutput) > 0 {
		var v any
		if json.Unmarshal(res.StructuredOutput, &v) == nil {
			parts = append(parts, a2a.NewDataPart(v))
		}
	}
	art := a2a.NewArtifactEvent(ec, parts...)
	art.Artifact.Name = "answer"
	art.LastChunk = true
	return []a2a.Event{art, a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, agentText(ec, res.Result))}, true
}

// answer reads msg as the answer to the approval the task waits on: yes,
// y, allow, approve or ok (any case) allows; any other text denies, and
// the model reads it as the reason. A data part {"allow": bool,
// "message": "…"} says the same in JSON.
func (r *run) answer(msg *a2a.Message) error {
	r.mu.Lock()
	p := r.waiting
	r.waiting = nil
	r.mu.Unlock()
	if p == nil {
		return fmt.Errorf("task %s is not waiting for input: %w", r.task, a2a.ErrInvalidParams)
	}
	d, err := decisionOf(msg)
	if err != nil {
		r.mu.Lock()
		r.waiting = p
		r.mu.Unlock()
		return err
	}
	// False when its caller gave up meanwhile (the subagent stopped):
	// nothing waits for the answer then, and the run goes on without it.
	r.approvals.Answer(p.ID, d)
	return nil
}

func decisionOf(msg *a2a.Message) (cadre.PermissionDecision, error) {
	if msg == nil {
		return cadre.PermissionDecision{}, fmt.Errorf("no message: %w", a2a.ErrInvalidParams)
	}
	for _, p := range msg.Parts {
		if data, ok := p.Data().(map[string]any); ok {
			allow, ok := data["allow"].(bool)
			if !ok {
				return cadre.PermissionDecision{}, fmt.Errorf(`approval answer: the data part needs "allow": true or false: %w`, a2a.ErrInvalidParams)
			}
			m, _ := data["message"].(string)
			return cadre.PermissionDecision{Allow: allow, Message: m}, nil
		}
	}
	text, err := messageText(msg)
	if err != nil {
		return cadre.PermissionDecision{}, err
	}
	switch strings.ToLower(strings.Trim(strings.TrimSpace(text), ".!")) {
	case "y", "yes", "allow", "approve", "approved", "ok":
		return cadre.PermissionDecision{Allow: true}, nil
	}
	return cadre.PermissionDecision{Message: text}, nil
}

// messageText is the text of msg: its text parts, and its data parts as
// JSON, in order. Files are refused by name: the main agent reads files
// from its workspace, not from the message.
func messageText(msg *a2a.Message) (string, error) {
	if msg == nil {
		return "", fmt.Errorf("no message: %w", a2a.ErrInvalidParams)
	}
	var b strings.Builder
	for i, p := range msg.Parts {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2a.Text:
			b.WriteString(string(c))
		case a2a.Data:
			js, err := json.Marshal(c.Value)
			if err != nil {
				return "", fmt.Errorf("message part %d: %v: %w", i, err, a2a.ErrInvalidParams)
			}
			b.Write(js)
		default:
			return "", fmt.Errorf("message part %d is a %T: cadre takes text and data parts: %w", i, p.Content, a2a.ErrInvalidParams)
		}
		b.WriteString("\n")
	}
	text := strings.TrimSpace(b.String())
	if text == "" {
		return "", fmt.Errorf("the message has no text: %w", a2a.ErrInvalidParams)
	}
	return text, nil
}

func agentText(ec *a2asrv.ExecutorContext, text string) *a2a.Message {
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text))
}

// approvalMessage asks the client for the approval: in words, and as data
// a program can read.
func approvalMessage(ec *a2asrv.ExecutorContext, p cadre.Approval) *a2a.Message {
	q := p.Request
	text := fmt.Sprintf("Approval needed: %s wants to run %s", q.Agent, q.Tool)
	if q.Target != "" {
		text += ": " + q.Target
	}
	text += `. Reply "yes" to allow it, or anything else to deny it (your text is the reason the agent reads).`
	msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text), a2a.NewDataPart(map[string]any{
		"approval": map[string]any{"tool": q.Tool, "target": q.Target, "agent": q.Agent},
	}))
	return msg
}
