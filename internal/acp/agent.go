package acp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/cadre-dev/cadre"
	acpsdk "github.com/coder/acp-go-sdk"
)

// Config is what Serve needs.
type Config struct {
	Backend Backend
	// In and Out are the client's end of the pipes: requests are read from
	// In, responses and notifications written to Out.
	In  io.Reader
	Out io.Writer
	// Logger hears what the client is not told (a failed write). Nil
	// discards it.
	Logger *slog.Logger
}

// Serve speaks ACP until the client closes its end or ctx ends, then stops
// every conversation it opened and waits for them.
func Serve(ctx context.Context, cfg Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &agent{backend: cfg.Backend, log: log, ctx: ctx, sessions: map[acpsdk.SessionId]*session{}, ready: make(chan struct{})}
	// The SDK's goroutines read its logger without a lock: nothing is read
	// from the client until the logger is in place.
	in := &gated{r: cfg.In, open: make(chan struct{})}
	conn := acpsdk.NewAgentSideConnection(a, cfg.Out, in)
	conn.SetLogger(log)
	a.client = conn
	close(a.ready)
	close(in.open)
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	cancel()
	a.shutdown()
	return nil
}

// agent implements ACP's Agent on top of a Backend.
type agent struct {
	backend Backend
	log     *slog.Logger
	ctx     context.Context // the connection's

	// client is set once the connection exists; ready is closed then.
	client client
	ready  chan struct{}

	mu       sync.Mutex
	sessions map[acpsdk.SessionId]*session
	closed   bool
}

var _ acpsdk.Agent = (*agent)(nil)
var _ acpsdk.AgentLoader = (*agent)(nil)

func (a *agent) Initialize(ctx context.Context, req acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	return acpsdk.InitializeResponse{
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		AgentInfo:       &acpsdk.Implementation{Name: "cadre", Title: acpsdk.Ptr("cadre"), Version: cadre.Version()},
		AgentCapabilities: acpsdk.AgentCapabilities{
			LoadSession: true,
			// Text and resource links are the baseline; embedded resources
			// are quoted into the message; images when the model takes them.
			PromptCapabilities: acpsdk.PromptCapabilities{EmbeddedContext: true, Image: a.backend.Images()},
			// MCP servers over stdio (always), streamable HTTP and SSE.
			McpCapabilities: acpsdk.McpCapabilities{Http: true, Sse: true},
		},
		AuthMethods: []acpsdk.AuthMethod{},
	}, nil
}

// Authenticate has nothing to do: cadre reads provider keys from its
// environment and settings, and offers no authentication methods.
func (a *agent) Authenticate(context.Context, acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	return acpsdk.AuthenticateResponse{}, nil
}

func (a *agent) NewSession(ctx context.Context, req acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	if err := checkCwd(req.Cwd); err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	mcp, err := mcpConfig(req.McpServers)
	if err != nil {
		return acpsdk.NewSessionResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	s, err := a.open(req.Cwd, "", mcp, nil)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	mode, err := s.started(ctx)
	if err != nil {
		return acpsdk.NewSessionResponse{}, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return acpsdk.NewSessionResponse{SessionId: s.id, Modes: modes(mode)}, nil
}

// LoadSession replays the session's history as updates, then continues it.
func (a *agent) LoadSession(ctx context.Context, req acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	if err := checkCwd(req.Cwd); err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	mcp, err := mcpConfig(req.McpServers)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	history, err := a.backend.History(ctx, req.Cwd, mcp, string(req.SessionId))
	if err != nil {
		return acpsdk.LoadSessionResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("load session %s: %v", req.SessionId, err)})
	}
	s, err := a.open(req.Cwd, req.SessionId, mcp, history)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	mode, err := s.started(ctx)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return acpsdk.LoadSessionResponse{Modes: modes(mode)}, nil
}

// open starts a session's conversation (resuming id when it is set) with
// the editor's MCP servers, replays history, and starts streaming its
// events.
func (a *agent) open(cwd string, id acpsdk.SessionId, mcp string, history []cadre.Event) (*session, error) {
	<-a.ready
	s := newSession(a.ctx, a.client, a.log, cwd)
	// The conversation lives as long as the connection, not the request.
	conv, err := a.backend.Open(a.ctx, OpenRequest{Cwd: cwd, Resume: string(id), Ask: s.ask, MCPConfig: mcp})
	if err != nil {
		return nil, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	s.conv = conv
	s.id = id
	if id == "" {
		s.id = acpsdk.SessionId(conv.SessionID())
	}
	s.replay(history)
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		_ = conv.Stop()
		return nil, acpsdk.NewInternalError(map[string]any{"error": "the connection is closing"})
	}
	if old := a.sessions[s.id]; old != nil {
		// Loading a session twice: the newer conversation replaces the older.
		defer func() { _ = old.conv.Stop(); <-old.done }()
	}
	a.sessions[s.id] = s
	a.mu.Unlock()
	go s.pump()
	return s, nil
}

func checkCwd(cwd string) error {
	if !filepath.IsAbs(cwd) {
		return acpsdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("cwd %q is not an absolute path", cwd)})
	}
	return nil
}

func (a *agent) session(id acpsdk.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[id]; s != nil {
		return s, nil
	}
	return nil, acpsdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("no session %q on this connection", id)})
}

func (a *agent) Prompt(ctx context.Context, req acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	s, err := a.session(req.SessionId)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	m, err := message(req.Prompt, a.backend.Images())
	if err != nil {
		return acpsdk.PromptResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return s.run(ctx, m)
}

func (a *agent) Cancel(ctx context.Context, req acpsdk.CancelNotification) error {
	if s, err := a.session(req.SessionId); err == nil {
		s.cancel()
	}
	return nil
}

// shutdown stops every conversation and waits for their events to end.
func (a *agent) shutdown() {
	a.mu.Lock()
	a.closed = true
	sessions := a.sessions
	a.sessions = map[acpsdk.SessionId]*session{}
	a.mu.Unlock()
	for _, s := range sessions {
		if err := s.conv.Stop(); err != nil {
			a.log.Warn("acp: stop session", "session", s.id, "err", err)
		}
	}
	for _, s := range sessions {
		<-s.done
	}
}

// The methods below belong to capabilities cadre does not offer.

func (a *agent) CloseSession(context.Context, acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	return acpsdk.CloseSessionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionClose)
}

func (a *agent) ListSessions(context.Context, acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	return acpsdk.ListSessionsResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionList)
}

func (a *agent) ResumeSession(context.Context, acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	return acpsdk.ResumeSessionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionResume)
}

func (a *agent) SetSessionConfigOption(context.Context, acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	return acpsdk.SetSessionConfigOptionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionSetConfigOption)
}

// SetSessionMode changes the session's permission mode from its next tool
// call on.
func (a *agent) SetSessionMode(ctx context.Context, req acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	s, err := a.session(req.SessionId)
	if err != nil {
		return acpsdk.SetSessionModeResponse{}, err
	}
	if err := s.conv.SetPermissionMode(string(req.ModeId)); err != nil {
		return acpsdk.SetSessionModeResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return acpsdk.SetSessionModeResponse{}, nil
}

// gated is a reader whose reads wait until open is closed.
type gated struct {
	r    io.Reader
	open chan struct{}
}

func (g *gated) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}
