package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/output"
)

// Conversation is the live session the protocol drives; Run binds it to a
// cadre Runtime, tests to a fake.
type Conversation interface {
	SessionID() string
	// Send queues a user message; it runs as its own turn, after the
	// turns before it.
	Send(ctx context.Context, in Input) error
	// Events yields every event of the session's tree until it ends.
	Events() iter.Seq2[cadre.Event, error]
	// Interrupt stops the running turn; the session goes on.
	Interrupt()
	SetPermissionMode(mode string) error
	// SetModel switches the model of the next turns; "" is the session's
	// default.
	SetModel(name string) error
	// Close says the input ended: queued turns and background work
	// finish, then Events ends.
	Close() error
	// Stop ends everything now.
	Stop() error
}

// Peer is the program at the other end of the pipes, as the session sees
// it: it answers permission questions and runs hook callbacks. Its methods
// may be called concurrently (parallel subagents ask at once).
type Peer interface {
	Ask(ctx context.Context, a Ask) (Answer, error)
	// Hook calls the program's hook callback id with Claude Code's hook
	// input JSON and returns its hook output JSON.
	Hook(ctx context.Context, callbackID string, input json.RawMessage, toolUseID string) (json.RawMessage, error)
}

// Config is what Serve needs.
type Config struct {
	In  io.Reader
	Out io.Writer
	// Verbose writes subagents' messages too (the SDK always asks).
	Verbose bool
	// ReplayUserMessages echoes each user line read as a user line with
	// isReplay set, before its turn's output (--replay-user-messages).
	ReplayUserMessages bool
	// Start opens the session: when the initialize request comes, or at
	// the first user message when the program sends none. peer reaches
	// the program.
	Start func(ctx context.Context, init Init, peer Peer) (Conversation, InitInfo, error)
	// Warn reports what the program did wrong that does not end the
	// session; nil discards it.
	Warn func(string)
}

// StartError is the error of a session that could not start (a bad model,
// bad settings): the runtime did not open.
type StartError struct{ Err error }

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// FailedError is what Serve returns when the session's last result was an
// error (max turns, budget, an interrupt, a failed turn): Claude Code then
// exits 1, which is how the Agent SDK's loop learns to throw.
type FailedError struct {
	// Reason is the last result's first error, or its subtype.
	Reason string
}

func (e *FailedError) Error() string { return "the last turn failed: " + e.Reason }

// ErrInputEnded is the error of a request to the program that can no
// longer be answered: its input (cadre's standard input) ended.
var ErrInputEnded = errors.New("the program's input ended before it answered")

// Serve speaks the protocol until the input ends and the session has
// finished what it was given, or ctx ends (then it stops the session).
func Serve(ctx context.Context, cfg Config) error {
	s := &server{
		cfg:     cfg,
		out:     cfg.Out,
		pending: map[string]chan responseBody{},
		ended:   make(chan struct{}),
	}
	s.events = output.New(cfg.Out, output.StreamJSON, cfg.Verbose)
	return s.serve(ctx)
}

type server struct {
	cfg Config

	// outMu makes each output line whole: events, responses and requests
	// are written from several goroutines.
	outMu  sync.Mutex
	out    io.Writer
	events output.Writer

	conv    Conversation
	init    Init
	info    InitInfo
	started bool
	pumped  chan struct{} // closed when the event pump has written the last event
	// failed is the main agent's last result, when it was an error; the
	// pump writes it before closing pumped.
	failed *FailedError

	mu      sync.Mutex
	pending map[string]chan responseBody // cadre's requests awaiting an answer
	ended   chan struct{}                // closed when the input ended
	endOnce sync.Once
}

// line is one input line, or the reader's end.
type line struct {
	n    int
	data []byte
	err  error
}

func (s *server) serve(ctx context.Context) error {
	lines := make(chan line)
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	go read(readCtx, s.cfg.In, lines)

	var failure error
loop:
	for {
		select {
		case <-ctx.Done():
			s.endInput()
			if s.conv != nil {
				_ = s.conv.Stop()
				<-s.pumped
			}
			return ctx.Err()
		case l := <-lines:
			if l.err != nil {
				if !errors.Is(l.err, io.EOF) {
					failure = l.err
				}
				break loop
			}
			if err := s.handle(ctx, l); err != nil {
				// What Claude Code does with a line it cannot read: it
				// says so and stops reading, so the program learns at once.
				failure = err
				break loop
			}
		}
	}
	stopReading()
	s.endInput()
	if s.conv == nil {
		if failure != nil {
			return failure
		}
		return errors.New("standard input ended before any user message (with --input-format stream-json, send JSONL user messages on standard input)")
	}
	closeErr := s.conv.Close()
	<-s.pumped
	if failure != nil {
		return failure
	}
	if closeErr != nil {
		return closeErr
	}
	if s.failed != nil {
		return s.failed
	}
	return nil
}

// read sends each line of in, numbered from 1, then the error that ended
// the input (io.EOF at the end).
func read(ctx context.Context, in io.Reader, lines chan<- line) {
	r := bufio.NewReader(in)
	for n := 1; ; n++ {
		b, err := r.ReadBytes('\n')
		if len(b) > 0 {
			select {
			case lines <- line{n: n, data: b}:
			case <-ctx.Done():
				return
			}
		}
		if err != nil {
			select {
			case lines <- line{err: err}:
			case <-ctx.Done():
			}
			return
		}
	}
}

func (s *server) warn(msg string) {
	if s.cfg.Warn != nil {
		s.cfg.Warn(msg)
	}
}

// handle acts on one input line. An error is a line that cannot be read.
func (s *server) handle(ctx context.Context, l line) error {
	data := strings.TrimSpace(string(l.data))
	if data == "" {
		return nil
	}
	var env envelope
	if err := json.Unmarshal([]byte(data), &env); err != nil {
		return fmt.Errorf("stream-json input line %d is not JSON: %w", l.n, err)
	}
	switch env.Type {
	case "user":
		in, err := parseUser(env)
		if err != nil {
			return fmt.Errorf("stream-json input line %d: %w", l.n, err)
		}
		if err := s.start(ctx, Init{}); err != nil {
			return err
		}
		if s.cfg.ReplayUserMessages {
			s.replay(env, in)
		}
		if err := s.conv.Send(ctx, in); err != nil {
			return fmt.Errorf("stream-json input line %d: %w", l.n, err)
		}
	case "control_request":
		s.request(ctx, env)
	case "control_response":
		if env.Response == nil {
			return fmt.Errorf("stream-json input line %d: control_response has no \"response\"", l.n)
		}
		s.answer(*env.Response)
	case "control_cancel_request", "keep_alive":
		// cadre answers the program's requests at once: nothing to cancel.
	case "":
		return fmt.Errorf("stream-json input line %d has no \"type\"", l.n)
	default:
		s.warn(fmt.Sprintf("stream-json input line %d: ignoring a line of type %q", l.n, env.Type))
	}
	return nil
}

// replay echoes a user line as Claude Code does with
// --replay-user-messages: the message as the program sent it, under its
// uuid (a new one when it gave none), marked isReplay.
func (s *server) replay(env envelope, in Input) {
	uuid := in.UUID
	if uuid == "" {
		uuid = ids.New()
	}
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(env.Message, &m) // parseUser read it already
	s.writeLine(userReplay{
		Type:      "user",
		Message:   replayMessage{Role: "user", Content: m.Content},
		SessionID: s.conv.SessionID(), UUID: uuid,
		Timestamp: time.Now().UTC().Format(time.RFC3339Nano), IsReplay: true,
	})
}

// start opens the session once.
func (s *server) start(ctx context.Context, init Init) error {
	if s.started {
		return nil
	}
	conv, info, err := s.cfg.Start(ctx, init, s)
	if err != nil {
		return &StartError{Err: err}
	}
	s.started, s.conv, s.init = true, conv, init
	s.info = info
	s.pumped = make(chan struct{})
	go s.pump()
	return nil
}

// pump writes the session's events until it ends.
func (s *server) pump() {
	defer close(s.pumped)
	for ev, err := range s.conv.Events() {
		if err != nil {
			s.warn(err.Error())
			continue
		}
		if ev.Type == cadre.EventResult && ev.ParentToolUseID == "" && ev.Result != nil {
			s.failed = failure(ev)
		}
		ev, ok := forwarded(ev, s.init.ForwardSubagentText)
		if !ok {
			continue
		}
		s.outMu.Lock()
		werr := s.events.Write(ev)
		s.outMu.Unlock()
		if werr != nil {
			s.warn("writing output: " + werr.Error())
		}
	}
	s.outMu.Lock()
	_ = s.events.Close()
	s.outMu.Unlock()
}

// failure is a main result's error, nil for a success.
func failure(ev cadre.Event) *FailedError {
	if !ev.Result.IsError {
		return nil
	}
	reason := ev.Subtype
	if len(ev.Result.Errors) > 0 {
		reason = ev.Result.Errors[0]
	}
	return &FailedError{Reason: reason}
}

// writeLine writes v as one line of JSON.
func (s *server) writeLine(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.warn("encode control line: " + err.Error())
		return
	}
	b = append(b, '\n')
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if _, err := s.out.Write(b); err != nil {
		s.warn("writing output: " + err.Error())
	}
}

func (s *server) respond(id string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.respondError(id, "encode response: "+err.Error(), "")
		return
	}
	s.writeLine(controlResponse{Type: "control_response", Response: responseBody{Subtype: "success", RequestID: id, Response: b}})
}

func (s *server) respondError(id, msg, code string) {
	s.writeLine(controlResponse{Type: "control_response", Response: responseBody{Subtype: "error", RequestID: id, Error: msg, ErrorCode: code}})
}

// request answers one of the program's control requests. Every request
// gets exactly one response: an unknown one an error, never silence.
func (s *server) request(ctx context.Context, env envelope) {
	id := env.RequestID
	var head requestHead
	if err := json.Unmarshal(env.Request, &head); err != nil || head.Subtype == "" {
		s.respondError(id, "control request has no subtype", "invalid_request")
		return
	}
	switch head.Subtype {
	case "initialize":
		s.initialize(ctx, id, env.Request)
	case "interrupt":
		// The answer says the turn was told to stop: it comes after, and
		// the interrupted turn's result may come before it or after.
		if s.conv != nil {
			s.conv.Interrupt()
		}
		s.respond(id, map[string]any{"still_queued": []string{}})
	case "set_permission_mode":
		var r struct {
			Mode string `json:"mode"`
		}
		if err := json.Unmarshal(env.Request, &r); err != nil || r.Mode == "" {
			s.respondError(id, "set_permission_mode needs a mode", "invalid_request")
			return
		}
		if err := s.start(ctx, Init{}); err != nil {
			s.respondError(id, err.Error(), "")
			return
		}
		if err := s.conv.SetPermissionMode(r.Mode); err != nil {
			s.respondError(id, err.Error(), "invalid_request")
			return
		}
		s.respond(id, map[string]string{"mode": r.Mode})
		// Claude Code tells every reader of the stream the mode changed.
		s.writeLine(map[string]any{
			"type": "system", "subtype": "status", "status": nil, "permissionMode": r.Mode,
			"uuid": ids.New(), "session_id": s.conv.SessionID(),
		})
	case "set_model":
		var r struct {
			Model *string `json:"model"`
		}
		if err := json.Unmarshal(env.Request, &r); err != nil {
			s.respondError(id, "set_model: "+err.Error(), "invalid_request")
			return
		}
		name := ""
		if r.Model != nil && *r.Model != "default" {
			name = *r.Model
		}
		if err := s.start(ctx, Init{}); err != nil {
			s.respondError(id, err.Error(), "")
			return
		}
		if err := s.conv.SetModel(name); err != nil {
			s.respondError(id, err.Error(), "invalid_request")
			return
		}
		s.respond(id, map[string]any{"model": name})
	default:
		if s.controlRequest(ctx, id, head.Subtype, env.Request) {
			return
		}
		// Claude Code's words, so programs that check for them work.
		s.respondError(id, "Unsupported control request subtype: "+head.Subtype, "unsupported_request")
	}
}

func (s *server) initialize(ctx context.Context, id string, raw json.RawMessage) {
	if s.started {
		s.respondError(id, "already initialized: initialize must be the first request, before any user message", "invalid_request")
		return
	}
	var r initializeRequest
	if err := json.Unmarshal(raw, &r); err != nil {
		s.respondError(id, "initialize: "+err.Error(), "invalid_request")
		return
	}
	if err := s.start(ctx, r.init()); err != nil {
		s.respondError(id, err.Error(), "")
		return
	}
	resp := initializeResponse{
		InitInfo: s.info, OutputStyle: "default", AvailableOutputStyles: []string{"default"},
		Account: accountInfo{TokenSource: "none", APIKeySource: s.info.APIKeySource},
		PID:     os.Getpid(), HookOnFailureSupported: true, AnalyticsDisabled: true,
	}
	if resp.Commands == nil {
		resp.Commands = []SlashCommand{}
	}
	if resp.Agents == nil {
		resp.Agents = []AgentInfo{}
	}
	if resp.Models == nil {
		resp.Models = []ModelInfo{}
	}
	if r.Hooks != nil {
		applied := true
		resp.HooksApplied = &applied
	}
	s.respond(id, resp)
}

// call sends one of cadre's requests to the program and waits for its
// answer, ctx's end, or the end of the input.
func (s *server) call(ctx context.Context, req any) (json.RawMessage, error) {
	id := ids.New()
	ch := make(chan responseBody, 1)
	s.mu.Lock()
	select {
	case <-s.ended:
		s.mu.Unlock()
		return nil, ErrInputEnded
	default:
	}
	s.pending[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	s.writeLine(controlRequest{Type: "control_request", RequestID: id, Request: req})
	select {
	case r := <-ch:
		if r.Subtype == "error" {
			return nil, fmt.Errorf("the program answered with an error: %s", r.Error)
		}
		return r.Response, nil
	case <-ctx.Done():
		s.writeLine(map[string]string{"type": "control_cancel_request", "request_id": id})
		return nil, ctx.Err()
	case <-s.ended:
		return nil, ErrInputEnded
	}
}

// answer hands a control_response to the request waiting for it; one for
// no request waiting is dropped, as the SDK drops those.
func (s *server) answer(r responseBody) {
	s.mu.Lock()
	ch, ok := s.pending[r.RequestID]
	delete(s.pending, r.RequestID)
	s.mu.Unlock()
	if !ok {
		s.warn(fmt.Sprintf("control_response for request %q, which is not waiting for one", r.RequestID))
		return
	}
	ch <- r
}

// endInput unblocks every request waiting for the program.
func (s *server) endInput() {
	s.endOnce.Do(func() {
		s.mu.Lock()
		close(s.ended)
		s.mu.Unlock()
	})
}

// Ask puts a can_use_tool request to the program. When the program cannot
// answer any more (its input ended) the call is denied.
func (s *server) Ask(ctx context.Context, a Ask) (Answer, error) {
	req := permissionRequest{
		Subtype: "can_use_tool", ToolName: a.Tool, DisplayName: a.Tool, Input: a.Input,
		Description: a.Description, BlockedPath: a.BlockedPath, DecisionReason: a.Reason,
		ToolUseID: a.ToolUseID, AgentID: a.AgentID, ParentToolUseID: a.ParentToolUseID, Diff: a.Diff,
	}
	if a.Agent != "" && a.Agent != "main" {
		req.AgentType = a.Agent
	}
	if len(req.Input) == 0 {
		req.Input = json.RawMessage("{}")
	}
	req.PermissionSuggestion = suggestions(a)
	raw, err := s.call(ctx, req)
	if errors.Is(err, ErrInputEnded) {
		return Answer{Message: ErrInputEnded.Error()}, nil
	}
	if err != nil {
		return Answer{}, fmt.Errorf("can_use_tool %s: %w", a.Tool, err)
	}
	var r permissionResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return Answer{}, fmt.Errorf("can_use_tool %s: the answer is not a PermissionResult: %w", a.Tool, err)
	}
	ans, err := r.answer()
	if err != nil {
		return Answer{}, fmt.Errorf("can_use_tool %s: %w", a.Tool, err)
	}
	if len(ans.Ignored) > 0 {
		s.warn(fmt.Sprintf("can_use_tool %s: updatedPermissions not applied: %s", a.Tool, strings.Join(ans.Ignored, ", ")))
	}
	if ans.Allow && ans.Mode != "" {
		if err := s.conv.SetPermissionMode(ans.Mode); err != nil {
			return Answer{}, fmt.Errorf("can_use_tool %s: setMode: %w", a.Tool, err)
		}
	}
	return ans, nil
}

// suggestions are the permission_suggestions of a question, in Claude
// Code's shapes: the exact rules for the project's local settings, cadre's
// wider rules for the session when there are no exact ones, and
// acceptEdits for the session when the call edits files.
func suggestions(a Ask) []permissionUpdate {
	var out []permissionUpdate
	add := func(rules []string, dest cadre.RuleDestination) {
		u := permissionUpdate{Type: "addRules", Behavior: "allow", Destination: string(dest)}
		for _, r := range rules {
			u.Rules = append(u.Rules, suggestion(r))
		}
		out = append(out, u)
	}
	switch {
	case len(a.ExactRules) > 0:
		add(a.ExactRules, cadre.RulesLocal)
	case len(a.Suggestions) > 0:
		add(a.Suggestions, cadre.RulesSession)
	}
	if a.Edits {
		out = append(out, permissionUpdate{Type: "setMode", Mode: string(cadre.PermissionAcceptEdits), Destination: string(cadre.RulesSession)})
	}
	return out
}

// Hook runs the program's hook callback.
func (s *server) Hook(ctx context.Context, callbackID string, input json.RawMessage, toolUseID string) (json.RawMessage, error) {
	raw, err := s.call(ctx, hookCallbackRequest{Subtype: "hook_callback", CallbackID: callbackID, Input: input, ToolUseID: toolUseID})
	if err != nil {
		return nil, fmt.Errorf("hook callback %s: %w", callbackID, err)
	}
	return raw, nil
}
