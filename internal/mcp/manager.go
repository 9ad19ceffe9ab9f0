package mcp

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// State is where a server stands.
type State string

const (
	StatePending       State = "pending"
	StateConnected     State = "connected"
	StateFailed        State = "failed"
	StateNeedsApproval State = "needs-approval"
	StateDisabled      State = "disabled"
)

// Status is one server's state, for `cadre mcp list`, the init line and
// warnings.
type Status struct {
	Name, Source, Transport string
	State                   State
	// Err says why a server failed, stopped or is held.
	Err string
	// Tools is how many tools a connected server offers.
	Tools              int
	Resources, Prompts bool
}

// Options configure a Manager.
type Options struct {
	// Cwd is where stdio servers start.
	Cwd string
	// Getenv expands ${VAR} in definitions; Environ is the environment a
	// stdio server inherits, before its own env. Defaults: the process's.
	Getenv  func(string) string
	Environ []string
	// Logger hears a server that fails to start or stops.
	Logger *slog.Logger
	// HTTPClient carries http and sse servers' requests.
	HTTPClient *http.Client
	// Terminate is how long closing a stdio server waits for it to exit
	// after its stdin closes, before signalling it: npm servers do not
	// exit on their own. Default 500ms.
	Terminate time.Duration
	// Version is cadre's, sent as the client's.
	Version string
	// CallTimeout bounds one tool call (MCP_TOOL_TIMEOUT); 0: no bound
	// but the run's own.
	CallTimeout time.Duration
	// Sandbox, when set, starts a project's stdio servers (Server.Project)
	// inside the sandbox; the user's own servers run as they are.
	Sandbox *sandbox.Runner
	// HideEnv are variables (the provider keys) that a project's server
	// definition may not expand: "${ANTHROPIC_API_KEY}" in its env or
	// headers would hand the key to the repository's server. The user's
	// own definitions may.
	HideEnv []string
}

// Manager owns the connections to a set of servers. It is safe for
// concurrent use; Close ends every connection and reaps every process.
type Manager struct {
	opts   Options
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  []*conn
	held   []Status
	closed bool
}

// NewManager returns a Manager with no servers.
func NewManager(opts Options) *Manager {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	if opts.Terminate <= 0 {
		opts.Terminate = 500 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{opts: opts, log: cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)), ctx: ctx, cancel: cancel}
}

// conn is one server's connection.
type conn struct {
	srv   Server
	ready chan struct{} // closed once connected or failed
	done  chan struct{} // closed once the connection has ended, its state set

	mu        sync.Mutex
	state     State
	err       error
	session   *mcp.ClientSession
	tools     []*mcp.Tool
	resources bool
	prompts   bool
	closing   bool
}

// Start connects to each server in its own goroutine and returns at once.
// A name already started is skipped.
func (m *Manager) Start(servers ...Server) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	for _, s := range servers {
		if slices.ContainsFunc(m.conns, func(c *conn) bool { return c.srv.Name == s.Name }) {
			continue
		}
		c := &conn{srv: s, ready: make(chan struct{}), done: make(chan struct{}), state: StatePending}
		m.conns = append(m.conns, c)
		m.wg.Go(func() { m.run(c) })
	}
}

// Hold records servers that will not start, so that Status lists them.
func (m *Manager) Hold(st ...Status) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held = append(m.held, st...)
}

// run connects c, then watches it until it ends.
func (m *Manager) run(c *conn) {
	defer close(c.done)
	cs, err := m.connect(c.srv)
	if err == nil {
		err = c.load(m.ctx, cs)
		if err != nil {
			cs.Close()
		}
	}
	c.mu.Lock()
	if err != nil {
		c.state, c.err = StateFailed, err
	} else {
		c.state, c.session = StateConnected, cs
	}
	closing := c.closing
	c.mu.Unlock()
	close(c.ready)
	if err != nil {
		if !closing {
			m.log.Warn("MCP server failed to start; its tools are not available", "server", c.srv.Name, "err", err)
		}
		return
	}
	if closing {
		// Close came while connecting: it could not see the session.
		cs.Close()
		return
	}
	werr := cs.Wait()
	c.mu.Lock()
	closing = c.closing
	if !closing {
		c.state = StateFailed
		c.err = errors.New("the server stopped")
		if werr != nil {
			c.err = fmt.Errorf("the server stopped: %w", werr)
		}
	}
	c.mu.Unlock()
	if !closing {
		m.log.Warn("MCP server stopped; its tools are no longer available", "server", c.srv.Name, "err", c.err)
	}
}

// connect starts the transport and the MCP handshake.
func (m *Manager) connect(s Server) (*mcp.ClientSession, error) {
	getenv := m.opts.Getenv
	var asked []string
	if s.Project && len(m.opts.HideEnv) > 0 {
		getenv = func(k string) string {
			if slices.Contains(m.opts.HideEnv, k) {
				asked = append(asked, k)
				return ""
			}
			return m.opts.Getenv(k)
		}
	}
	cfg, err := s.Config.Expand(getenv)
	if len(asked) > 0 {
		slices.Sort(asked)
		return nil, fmt.Errorf("a project's server may not read the provider key variable %s: only your own settings may pass a key to a server", strings.Join(slices.Compact(asked), ", "))
	}
	if err != nil {
		return nil, err
	}
	var t mcp.Transport
	switch cfg.Type {
	case TransportStdio:
		cmd := exec.Command(cfg.Command, cfg.Args...)
		cmd.Dir = m.opts.Cwd
		cmd.Env = append(slices.Clone(m.opts.Environ), envList(cfg.Env)...)
		// The server's own log goes nowhere: it is not cadre's output, and
		// a chatty server must not fill a pipe nobody reads.
		cmd.Stderr = nil
		if s.Project {
			if _, err := m.opts.Sandbox.Command(cmd, cmd.Dir, ""); err != nil {
				return nil, err
			}
		}
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: m.opts.Terminate}
	case TransportHTTP:
		t = &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: m.httpClient(cfg.Headers), MaxRetries: 1}
	case TransportSSE:
		t = &mcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: m.httpClient(cfg.Headers)}
	default:
		return nil, fmt.Errorf("transport %q is unknown", cfg.Type)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "cadre", Version: m.opts.Version}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
	})
	cs, err := client.Connect(m.ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connect (%s): %w", cfg.Type, err)
	}
	return cs, nil
}

// load lists the server's tools and notes what else it offers.
func (c *conn) load(ctx context.Context, cs *mcp.ClientSession) error {
	caps := &mcp.ServerCapabilities{}
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	var tools []*mcp.Tool
	if caps.Tools != nil {
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return fmt.Errorf("list tools: %w", err)
			}
			tools = append(tools, t)
		}
	}
	c.tools, c.resources, c.prompts = tools, caps.Resources != nil, caps.Prompts != nil
	return nil
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// httpClient adds a server's headers to every request.
func (m *Manager) httpClient(headers map[string]string) *http.Client {
	base := cmp.Or(m.opts.HTTPClient, http.DefaultClient)
	if len(headers) == 0 {
		return base
	}
	c := *base
	c.Transport = headerTransport{base: cmp.Or(base.Transport, http.DefaultTransport), headers: headers}
	return &c
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	return h.base.RoundTrip(req)
}

// Wait blocks until the named servers (all when names is empty) have
// connected or failed, or ctx ends: callers bound it with a timeout, and
// a server still pending then goes on connecting.
func (m *Manager) Wait(ctx context.Context, names ...string) {
	for _, c := range m.snapshot() {
		if len(names) > 0 && !slices.Contains(names, c.srv.Name) {
			continue
		}
		select {
		case <-c.ready:
		case <-ctx.Done():
			return
		}
	}
}

func (m *Manager) snapshot() []*conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.conns)
}

func (m *Manager) find(name string) *conn {
	for _, c := range m.snapshot() {
		if c.srv.Name == name {
			return c
		}
	}
	return nil
}

// Status lists every server: started ones in start order, then held ones.
func (m *Manager) Status() []Status {
	var out []Status
	for _, c := range m.snapshot() {
		out = append(out, c.status())
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return append(out, m.held...)
}

func (c *conn) status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{Name: c.srv.Name, Source: c.srv.Source, Transport: c.srv.Config.Type, State: c.state}
	if c.err != nil {
		st.Err = c.err.Error()
	}
	if c.state == StateConnected {
		st.Tools, st.Resources, st.Prompts = len(c.tools), c.resources, c.prompts
	}
	return st
}

// live returns c's session while it is connected, else an error saying
// why not.
func (c *conn) live() (*mcp.ClientSession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.state == StateConnected:
		return c.session, nil
	case c.err != nil:
		return nil, fmt.Errorf("MCP server %q is not connected: %v", c.srv.Name, c.err)
	}
	return nil, fmt.Errorf("MCP server %q is not connected (%s)", c.srv.Name, c.state)
}

// Connected reports whether the named server is connected now.
func (m *Manager) Connected(name string) bool {
	c := m.find(name)
	if c == nil {
		return false
	}
	_, err := c.live()
	return err == nil
}

// Close ends every connection: a stdio server's stdin is closed, then it
// is signalled after Options.Terminate, and reaped. It waits for all of
// that. A server's own exit status at close (npm servers end on the
// signal) is logged at debug level only: the run is over.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	conns := slices.Clone(m.conns)
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		c.mu.Lock()
		c.closing = true
		cs := c.session
		c.mu.Unlock()
		if cs != nil {
			wg.Go(func() {
				if err := cs.Close(); err != nil {
					m.log.Debug("MCP server closed", "server", c.srv.Name, "err", err)
				}
			})
		}
	}
	// Connections still being made end with the manager's context.
	m.cancel()
	wg.Wait()
	m.wg.Wait()
}

// ConnectedNames lists the servers connected now, in start order: a run notes
// them with its pool, to tell its agent later which of them stopped.
func (m *Manager) ConnectedNames() []string {
	var out []string
	for _, c := range m.snapshot() {
		if _, err := c.live(); err == nil {
			out = append(out, c.srv.Name)
		}
	}
	return out
}

// StoppedNotice is the per-turn note for an agent whose pool holds the
// tools of the named servers: one line for each of them that has stopped
// since, "" when none has. A running agent's tool list stays as it was
// (its requests keep their cached prefix); this note is how its model
// learns those tools are gone.
func (m *Manager) StoppedNotice(names []string) string {
	var lines []string
	for _, name := range names {
		c := m.find(name)
		if c == nil {
			continue
		}
		st := c.status()
		if st.State != StateFailed {
			continue
		}
		lines = append(lines, strings.NewReplacer("{server}", name, "{reason}", st.Err, "{prefix}", Normalize(name)).Replace(strings.TrimSpace(stoppedMD)))
	}
	return strings.Join(lines, "\n")
}

//go:embed stopped.md
var stoppedMD string
