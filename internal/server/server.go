package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/cadre-dev/cadre"
)

// Config configures a Server.
type Config struct {
	// Runtime runs every conversation; the caller owns it and closes it
	// after Shutdown.
	Runtime *cadre.Runtime
	// Token is required on every route but the agent card: as
	// "Authorization: Bearer <token>", the web view's cookie, or a
	// "token" query parameter. Empty, New makes a random one (Token()).
	Token string
	// Hosts, if set, are the only Host names served: for a loopback
	// address, its own and LoopbackHosts, so that a DNS-rebinding page
	// cannot reach it under its own name.
	Hosts []string
	// BodyTimeout bounds how long a request body may take to arrive; 0
	// means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// A2A, if set, serves the A2A endpoints under /a2a/ (the prefix is
	// stripped, so it sees the paths the A2A spec names: "/" for the
	// JSON-RPC binding, "/v1/…" for HTTP+JSON). It is behind the token.
	A2A http.Handler
	// AgentCard, if set, serves /.well-known/agent-card.json, without the
	// token: A2A clients read it before they know how to authenticate.
	AgentCard http.Handler
	// KeepEnded is how many ended runs stay in memory, their event logs
	// with them (newest kept); 0 means DefaultKeepEnded. An evicted run's
	// session is still read from the store (/api/sessions/{id}).
	KeepEnded int
	// Model and PermissionMode are the defaults of a run that names none.
	Model          string
	PermissionMode cadre.PermissionMode
	Logger         *slog.Logger
}

// DefaultKeepEnded is Config.KeepEnded's default.
const DefaultKeepEnded = 100

// Server serves the API, the web view and the A2A endpoints over one
// runtime. Its runs live until they end, are stopped, or Shutdown.
type Server struct {
	cfg     Config
	rt      *cadre.Runtime
	log     *slog.Logger
	handler http.Handler

	// ctx bounds every run; cancel ends them all (Shutdown).
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the runs' goroutines

	mu       sync.Mutex
	runs     map[string]*run // by session id
	order    []*run          // start order
	opening  map[string]bool // sessions being resumed, not yet in runs
	shutdown bool
}

// New returns a Server over cfg.Runtime.
func New(cfg Config) (*Server, error) {
	if cfg.Runtime == nil {
		return nil, errors.New("server: Config.Runtime is required")
	}
	if cfg.PermissionMode != "" {
		if err := validMode(cfg.PermissionMode); err != nil {
			return nil, err
		}
	}
	if cfg.KeepEnded < 0 {
		return nil, fmt.Errorf("server: Config.KeepEnded is %d, want 0 or more", cfg.KeepEnded)
	}
	if cfg.KeepEnded == 0 {
		cfg.KeepEnded = DefaultKeepEnded
	}
	if cfg.Token == "" {
		cfg.Token = NewToken()
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, rt: cfg.Runtime, log: log, ctx: ctx, cancel: cancel, runs: map[string]*run{}, opening: map[string]bool{}}
	s.handler = s.routes()
	return s, nil
}

// SetHosts sets Config.Hosts once the address is known (a listener on
// port 0); call it before serving.
func (s *Server) SetHosts(hosts []string) { s.cfg.Hosts = hosts }

// Token is the token every request must carry.
func (s *Server) Token() string { return s.cfg.Token }

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Shutdown stops every run as /stop does (the turn in progress and every
// subagent; each session records that it was stopped), waits until all
// have ended and their event streams are closed, or until ctx ends. New
// runs are refused from its start.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutdown = true
	runs := append([]*run(nil), s.order...)
	s.mu.Unlock()
	var stopping sync.WaitGroup
	for _, r := range runs {
		stopping.Go(func() { r.conv.Stop() })
	}
	done := make(chan struct{})
	go func() {
		stopping.Wait()
		s.cancel()
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.cancel()
		return fmt.Errorf("server shutdown: %w", ctx.Err())
	}
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/runs", s.startRun)
	mux.HandleFunc("GET /api/runs", s.listRuns)
	mux.HandleFunc("GET /api/runs/{id}", s.withRun(s.getRun))
	mux.HandleFunc("GET /api/runs/{id}/events", s.withRun(s.streamEvents))
	mux.HandleFunc("GET /api/runs/{id}/activity", s.withRun(s.getActivity))
	mux.HandleFunc("GET /api/runs/{id}/agents", s.withRun(s.getAgents))
	mux.HandleFunc("POST /api/runs/{id}/messages", s.withRun(s.sendMessage))
	mux.HandleFunc("POST /api/runs/{id}/interrupt", s.withRun(s.interrupt))
	mux.HandleFunc("POST /api/runs/{id}/abort", s.withRun(s.abort))
	mux.HandleFunc("POST /api/runs/{id}/close", s.withRun(s.closeRun))
	mux.HandleFunc("POST /api/runs/{id}/stop", s.withRun(s.stopRun))
	mux.HandleFunc("GET /api/runs/{id}/subagents", s.withRun(s.listSubagents))
	mux.HandleFunc("POST /api/runs/{id}/subagents/{target}/messages", s.withRun(s.sendSubagent))
	mux.HandleFunc("POST /api/runs/{id}/subagents/{target}/stop", s.withRun(s.stopSubagent))
	mux.HandleFunc("GET /api/runs/{id}/approvals", s.withRun(s.listApprovals))
	mux.HandleFunc("POST /api/runs/{id}/approvals/{n}", s.withRun(s.answerApproval))
	mux.HandleFunc("GET /api/approvals", s.allApprovals)
	mux.HandleFunc("GET /api/sessions", s.listSessions)
	mux.HandleFunc("GET /api/sessions/{id}", s.getSession)
	mux.HandleFunc("GET /api/sessions/{id}/tree", s.sessionTree)
	mux.HandleFunc("GET /api/sessions/{id}/team", s.getTeam)
	mux.HandleFunc("GET /api/tasks", s.listTasks)
	mux.HandleFunc("GET /api/tasks/{id}", s.getTask)
	mux.HandleFunc("GET /api/tasks/{id}/output", s.taskOutput)
	mux.HandleFunc("POST /api/tasks/{id}/stop", s.stopTask)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no API route %s %s (docs/server.md lists them)", r.Method, r.URL.Path))
	})
	if s.cfg.A2A != nil {
		mux.Handle("/a2a/", http.StripPrefix("/a2a", s.cfg.A2A))
	}
	mux.Handle("/", webHandler())

	return s.guard(s.cfg.AgentCard, mux)
}

// CheckAddr refuses to serve addr without a token unless it is a loopback
// address: anyone who can reach the port could run tools on this machine.
// It reports whether addr is loopback.
func CheckAddr(addr, token string) (loopback bool, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--addr %q: want host:port, e.g. 127.0.0.1:8420: %w", addr, err)
	}
	if port == "" {
		return false, fmt.Errorf("--addr %q: the port is missing", addr)
	}
	loopback = host == "localhost"
	if ip := net.ParseIP(host); ip != nil {
		loopback = ip.IsLoopback()
	}
	if !loopback && token == "" {
		where := host
		if where == "" {
			where = "every interface"
		}
		return false, fmt.Errorf("--addr %s listens on %s, beyond this machine: set a token with --token or CADRE_SERVE_TOKEN (or bind 127.0.0.1)", addr, where)
	}
	return loopback, nil
}
