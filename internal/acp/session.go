package acp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
	acpsdk "github.com/coder/acp-go-sdk"
)

// client is what a session needs of the editor's end of the connection.
type client interface {
	SessionUpdate(ctx context.Context, n acpsdk.SessionNotification) error
	RequestPermission(ctx context.Context, r acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error)
}

// Permission option ids.
const (
	optAllow       = "allow"
	optAllowAlways = "allow_always"
	optReject      = "reject"
)

// session is one ACP session: a live conversation whose events stream to
// the client as updates, one prompt at a time.
type session struct {
	id     acpsdk.SessionId
	client client
	log    *slog.Logger
	// ctx lives as long as the connection: updates sent outside a prompt
	// (a background run's notification turn) use it.
	ctx  context.Context
	conv Conversation

	// prompt serialises prompts: a turn's result answers one prompt.
	prompt sync.Mutex

	// mu guards the translator, the waiting prompt and the order of the
	// updates sent: the event pump and permission requests both send.
	mu        sync.Mutex
	tr        *translator
	waiting   chan turnEnd
	cancelled bool
	// busy is set while a main turn runs (its events were seen, its result
	// not yet), and skip is how many results a waiting prompt lets pass:
	// a prompt sent during a turn nobody prompted (a background run's
	// notification) runs after it, and is answered by its own result.
	busy bool
	skip int

	// done is closed when the conversation's events have ended; ready
	// when its first event, the init, has been seen (or it ended), with
	// init set: what the session starts with.
	done      chan struct{}
	ready     chan struct{}
	readyOnce sync.Once
	init      *cadre.InitInfo
}

// turnEnd is how a main turn ended.
type turnEnd struct {
	subtype string
	result  *cadre.ResultInfo
}

func newSession(ctx context.Context, c client, log *slog.Logger, cwd string) *session {
	return &session{client: c, log: log, ctx: ctx, tr: newTranslator(cwd), done: make(chan struct{}), ready: make(chan struct{})}
}

// pump sends the conversation's events as updates until it ends, and hands
// each main turn's result to the prompt that waits for it.
func (s *session) pump() {
	defer close(s.done)
	defer s.readyOnce.Do(func() { close(s.ready) })
	for ev, err := range s.conv.Events() {
		if err != nil {
			s.log.Warn("acp: conversation event", "session", s.id, "err", err)
			continue
		}
		s.mu.Lock()
		if ev.Type == cadre.EventSystem && ev.Subtype == cadre.SubtypeInit && ev.Init != nil && s.init == nil {
			s.init = ev.Init
			s.send(commands(ev.Init)...)
			s.readyOnce.Do(func() { close(s.ready) })
		}
		s.send(s.tr.event(ev, false)...)
		main := ev.ParentToolUseID == ""
		if main && (ev.Type == cadre.EventAssistant || ev.Type == cadre.EventUser) {
			s.busy = true
		}
		if main && ev.Type == cadre.EventResult && ev.Result != nil {
			s.busy = false
			s.ended(turnEnd{subtype: ev.Subtype, result: ev.Result})
		}
		s.mu.Unlock()
	}
}

// ended hands a main turn's end to the prompt that waits for it; the
// caller holds mu.
func (s *session) ended(end turnEnd) {
	if s.waiting != nil && s.skip == 0 {
		s.waiting <- end
		s.waiting = nil
		return
	}
	if s.skip > 0 {
		s.skip--
	}
	if msg := failure(end); msg != "" {
		// A turn nobody prompted (a background run's notification) failed:
		// the user reads why in the conversation.
		s.send(acpsdk.UpdateAgentMessageText(msg))
	}
}

// send delivers updates in order; the caller holds mu. A client that went
// away ends the connection, which stops the session: the error is logged.
func (s *session) send(updates ...acpsdk.SessionUpdate) {
	if s.ctx.Err() != nil {
		return // the connection is closing: nobody reads any more
	}
	for _, u := range updates {
		if err := s.client.SessionUpdate(s.ctx, acpsdk.SessionNotification{SessionId: s.id, Update: u}); err != nil {
			s.log.Warn("acp: send session/update", "session", s.id, "err", err)
		}
	}
}

// replay sends a loaded session's history, before the load is answered.
func (s *session) replay(history []cadre.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range history {
		s.send(s.tr.event(ev, true)...)
	}
}

// run sends one prompt and waits for the end of its turn. Cancelling ctx
// does not end the wait: session/cancel interrupts the turn, and the
// interrupted turn's result answers the prompt with "cancelled".
func (s *session) run(ctx context.Context, m Message) (acpsdk.PromptResponse, error) {
	s.prompt.Lock()
	defer s.prompt.Unlock()
	ch := make(chan turnEnd, 1)
	s.mu.Lock()
	s.waiting, s.cancelled, s.skip = ch, false, 0
	if s.busy {
		s.skip = 1
	}
	s.mu.Unlock()
	if err := s.conv.Send(context.WithoutCancel(ctx), m); err != nil {
		s.mu.Lock()
		s.waiting = nil
		s.mu.Unlock()
		return acpsdk.PromptResponse{}, fmt.Errorf("send the prompt to session %s: %w", s.id, err)
	}
	var end turnEnd
	select {
	case end = <-ch:
	case <-s.done:
		return acpsdk.PromptResponse{}, fmt.Errorf("session %s ended before its turn did", s.id)
	}
	s.mu.Lock()
	cancelled := s.cancelled
	s.mu.Unlock()
	if cancelled {
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	}
	return stopReason(end)
}

// started waits until the conversation has said how it starts, and
// returns its permission mode.
func (s *session) started(ctx context.Context) (string, error) {
	select {
	case <-s.ready:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.init == nil {
		return "", fmt.Errorf("session %s ended before it started", s.id)
	}
	return string(s.init.PermissionMode), nil
}

// cancel interrupts the running turn, if a prompt waits for one.
func (s *session) cancel() {
	s.mu.Lock()
	running := s.waiting != nil
	if running {
		s.cancelled = true
	}
	s.mu.Unlock()
	if running {
		s.conv.Interrupt()
	}
}

// stopReason maps how a turn ended to ACP's stop reason; a turn that
// failed is an error the client shows.
func stopReason(end turnEnd) (acpsdk.PromptResponse, error) {
	r := end.result
	switch {
	case end.subtype == cadre.ResultMaxTurns:
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonMaxTurnRequests}, nil
	case r.StopReason == llm.StopRefusal:
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonRefusal}, nil
	case r.IsError:
		return acpsdk.PromptResponse{}, acpsdk.NewInternalError(map[string]any{"error": failure(end)})
	case r.StopReason == llm.StopMaxTokens:
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonMaxTokens}, nil
	}
	return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
}

// failure says why a turn failed, or "" if it did not.
func failure(end turnEnd) string {
	if !end.result.IsError {
		return ""
	}
	if len(end.result.Errors) > 0 {
		return "cadre: " + strings.Join(end.result.Errors, "; ")
	}
	return "cadre: the turn failed (" + end.subtype + ")"
}

// ask puts a permission question to the user. The request names the
// asking agent in its title and carries the call as the editor knows it.
func (s *session) ask(ctx context.Context, a Ask) (Answer, error) {
	s.mu.Lock()
	tc, pre := s.tr.permission(a)
	s.send(pre...)
	s.mu.Unlock()
	opts := []acpsdk.PermissionOption{{OptionId: optAllow, Name: "Allow", Kind: acpsdk.PermissionOptionKindAllowOnce}}
	if len(a.Suggestions) > 0 {
		opts = append(opts, acpsdk.PermissionOption{
			OptionId: optAllowAlways, Kind: acpsdk.PermissionOptionKindAllowAlways,
			Name: "Always allow " + strings.Join(a.Suggestions, ", "),
		})
	}
	opts = append(opts, acpsdk.PermissionOption{OptionId: optReject, Name: "Reject", Kind: acpsdk.PermissionOptionKindRejectOnce})
	resp, err := s.client.RequestPermission(ctx, acpsdk.RequestPermissionRequest{SessionId: s.id, ToolCall: tc, Options: opts})
	if err != nil {
		return Answer{}, fmt.Errorf("ask the client about %s: %w", a.Tool, err)
	}
	var ans Answer
	switch o := resp.Outcome; {
	case o.Cancelled != nil:
		ans.Message = "The user cancelled the turn before answering."
	case o.Selected == nil:
		return Answer{}, errors.New("the client's permission answer has no outcome")
	case o.Selected.OptionId == optAllow:
		ans.Allow = true
	case o.Selected.OptionId == optAllowAlways && len(a.Suggestions) > 0:
		ans.Allow, ans.Remember = true, a.Suggestions
	case o.Selected.OptionId == optReject:
	default:
		return Answer{}, fmt.Errorf("the client chose %q, which was not offered", o.Selected.OptionId)
	}
	if ans.Allow {
		s.mu.Lock()
		if c := s.tr.calls[a.ToolUseID]; c != nil {
			s.send(s.tr.running(c)...)
		}
		s.mu.Unlock()
	}
	return ans, nil
}
