package acp

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// Runtimes is the Backend of `cadre acp`: a cadre Runtime per working
// directory an editor opens a session in (and per set of MCP servers the
// editor gives its sessions there: a runtime starts its servers once, for
// all its sessions), each opened on first use with the same options, all
// closed by Close.
type Runtimes struct {
	opts cadre.Options // Cwd is set per runtime

	mu       sync.Mutex
	runtimes map[string]*cadre.Runtime
	closed   bool
}

// NewRuntimes returns a Backend whose runtimes are opened with opts.
func NewRuntimes(opts cadre.Options) *Runtimes {
	return &Runtimes{opts: opts, runtimes: map[string]*cadre.Runtime{}}
}

// runtime returns the Runtime of cwd with the MCP servers of mcpConfig
// added, opening it the first time; its warnings (a broken agent file) go
// to the logger then.
func (r *Runtimes) runtime(ctx context.Context, cwd, mcpConfig string) (*cadre.Runtime, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("cadre is shutting down")
	}
	key := cwd + "\x00" + mcpConfig
	if rt := r.runtimes[key]; rt != nil {
		return rt, nil
	}
	opts := r.opts
	opts.Cwd = cwd
	if mcpConfig != "" {
		opts.MCPConfig = append(slices.Clone(opts.MCPConfig), mcpConfig)
	}
	rt, err := cadre.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("open cadre in %s: %w", cwd, err)
	}
	if opts.Logger != nil {
		for _, w := range rt.Warnings() {
			opts.Logger.Warn(w, "cwd", cwd)
		}
	}
	r.runtimes[key] = rt
	return rt, nil
}

// Close closes every runtime opened.
func (r *Runtimes) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	var errs []error
	for _, rt := range r.runtimes {
		errs = append(errs, rt.Close())
	}
	return errors.Join(errs...)
}

// Images: cadre passes a prompt's images to the model as image blocks.
func (r *Runtimes) Images() bool { return true }

func (r *Runtimes) Open(ctx context.Context, req OpenRequest) (Conversation, error) {
	rt, err := r.runtime(ctx, req.Cwd, req.MCPConfig)
	if err != nil {
		return nil, err
	}
	open := cadre.OpenRequest{Resume: req.Resume}
	if ask := req.Ask; ask != nil {
		open.Permission = func(ctx context.Context, q cadre.PermissionRequest) (cadre.PermissionDecision, error) {
			a, err := ask(ctx, Ask{
				Tool: q.Tool, Target: q.Target, Input: q.Input, ToolUseID: q.ToolUseID, Reason: q.Reason,
				Agent: q.Agent, AgentID: q.AgentID, ParentToolUseID: q.ParentToolUseID, Suggestions: q.Suggestions,
				Change: q.Change,
			})
			return cadre.PermissionDecision{Allow: a.Allow, Message: a.Message, Remember: a.Remember}, err
		}
	}
	c, err := rt.Open(ctx, open)
	if err != nil {
		return nil, err
	}
	return conversation{c}, nil
}

// History is a main session's transcript, its messages as events.
func (r *Runtimes) History(ctx context.Context, cwd, mcpConfig, sessionID string) ([]cadre.Event, error) {
	rt, err := r.runtime(ctx, cwd, mcpConfig)
	if err != nil {
		return nil, err
	}
	info, entries, err := rt.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if info.ParentID != "" {
		return nil, fmt.Errorf("session %s is a subagent's (of %s); load its main session", sessionID, info.ParentID)
	}
	var out []cadre.Event
	for _, e := range entries {
		if e.Message == nil {
			continue
		}
		switch e.Type {
		case "user":
			out = append(out, cadre.Event{Type: cadre.EventUser, SessionID: sessionID, UUID: e.UUID, Message: e.Message})
		case "assistant":
			out = append(out, cadre.Event{Type: cadre.EventAssistant, SessionID: sessionID, UUID: e.UUID, Message: e.Message})
		}
	}
	return out, nil
}

// conversation adapts a cadre Conversation.
type conversation struct{ c *cadre.Conversation }

func (w conversation) SessionID() string                     { return w.c.SessionID() }
func (w conversation) Events() iter.Seq2[cadre.Event, error] { return w.c.Events() }
func (w conversation) Interrupt()                            { w.c.Interrupt() }
func (w conversation) Stop() error                           { return w.c.Stop() }

func (w conversation) SetPermissionMode(mode string) error {
	return w.c.SetPermissionMode(cadre.PermissionMode(mode))
}

func (w conversation) Send(ctx context.Context, m Message) error {
	msg := cadre.Message{Text: m.Text}
	for _, im := range m.Images {
		msg.Blocks = append(msg.Blocks, llm.Block{Type: llm.BlockImage, Source: &llm.ImageSource{Type: "base64", MediaType: im.MediaType, Data: im.Data}})
	}
	return w.c.Send(ctx, msg)
}
