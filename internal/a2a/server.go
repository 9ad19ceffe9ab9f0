package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/uuid"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/ids"
)

// Paths the handler serves, relative to the server's root: the layout of
// `cadre serve`, which mounts Endpoints under Prefix and CardHandler at
// CardPath.
const (
	// CardPath is the well-known agent card.
	CardPath = a2asrv.WellKnownAgentCardPath
	// Prefix is where Endpoints is mounted, stripped before it sees the
	// request.
	Prefix = "/a2a"
	// JSONRPCPath takes the JSON-RPC binding's POSTs.
	JSONRPCPath = Prefix + "/"
	// RESTPath prefixes the HTTP+JSON binding (/a2a/rest/message:send, …).
	RESTPath = Prefix + "/rest"
)

// Config configures a Server.
type Config struct {
	// Runtime runs the main agent; the Server does not close it.
	Runtime *cadre.Runtime
	// Name and Description are the agent card's; defaults name cadre.
	Name, Description string
	// BaseURL, if set, is the public root URL written in the agent card
	// ("https://host:8420"); otherwise each card names the scheme and host
	// it was asked on, which is right behind no proxy.
	BaseURL string
	// Model, if set, replaces the settings' model for every conversation.
	Model string
	// PermissionMode, if set, is every conversation's permission mode.
	PermissionMode cadre.PermissionMode
	// Bearer says the endpoints want "Authorization: Bearer <token>"
	// (cadre serve's token): the card declares it, so clients know before
	// their first call. The check itself is the mounting server's.
	Bearer bool
}

// Server is the A2A endpoint of a runtime. Its conversations live until
// their task ends or Close; it is safe for concurrent use.
type Server struct {
	cfg       Config
	handler   http.Handler
	endpoints http.Handler

	ctx  context.Context // the life of every conversation
	stop context.CancelFunc
	wg   sync.WaitGroup // the event readers of the conversations

	mu       sync.Mutex
	closed   bool
	runs     map[a2a.TaskID]*run
	contexts map[string]*run // session id → its open conversation's run
}

// New builds a Server for cfg.Runtime.
func New(cfg Config) (*Server, error) {
	if cfg.Runtime == nil {
		return nil, errors.New("a2a server: no runtime")
	}
	if cfg.BaseURL != "" {
		if err := checkBaseURL(cfg.BaseURL); err != nil {
			return nil, fmt.Errorf("a2a server: base URL %q: %w", cfg.BaseURL, err)
		}
		cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	if cfg.Name == "" {
		cfg.Name = "cadre"
	}
	if cfg.Description == "" {
		// The card is public: it names no path of this machine.
		cfg.Description = "cadre's main agent: give it a task in words; it works in its project with its tools and subagents and answers."
	}
	s := &Server{cfg: cfg, runs: map[a2a.TaskID]*run{}, contexts: map[string]*run{}}
	s.ctx, s.stop = context.WithCancel(context.Background())
	rh := a2asrv.NewHandler(&executor{s: s},
		a2asrv.WithCapabilityChecks(&a2a.AgentCapabilities{Streaming: true}))
	endpoints := http.NewServeMux()
	endpoints.Handle("POST /{$}", a2asrv.NewJSONRPCHandler(rh))
	endpoints.Handle("/rest/", http.StripPrefix("/rest", a2asrv.NewRESTHandler(rh)))
	s.endpoints = endpoints
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+CardPath, s.serveCard)
	mux.Handle(Prefix+"/", http.StripPrefix(Prefix, endpoints))
	s.handler = mux
	return s, nil
}

// ServeHTTP serves the agent card at CardPath, and Endpoints under Prefix.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Endpoints serves the bindings with Prefix stripped: JSON-RPC POSTs at
// "/", HTTP+JSON under "/rest/".
func (s *Server) Endpoints() http.Handler { return s.endpoints }

// CardHandler serves the agent card (GET).
func (s *Server) CardHandler() http.Handler { return http.HandlerFunc(s.serveCard) }

// Close stops every conversation still going (their tasks end canceled as
// far as the runtime goes) and waits for them.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	runs := make([]*run, 0, len(s.runs))
	for _, r := range s.runs {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	for _, r := range runs {
		r.conv.Stop()
	}
	s.stop()
	s.wg.Wait()
	return nil
}

// Card is the agent card, its interfaces rooted at base ("http://host").
func (s *Server) Card(base string) *a2a.AgentCard {
	card := &a2a.AgentCard{
		Name:        s.cfg.Name,
		Description: s.cfg.Description,
		Version:     cadre.Version(),
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(base+JSONRPCPath, a2a.TransportProtocolJSONRPC),
			a2a.NewAgentInterface(base+RESTPath, a2a.TransportProtocolHTTPJSON),
		},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{},
	}
	if s.cfg.Bearer {
		card.SecuritySchemes = a2a.NamedSecuritySchemes{"bearer": a2a.HTTPAuthSecurityScheme{
			Scheme: "Bearer", Description: "cadre serve's token (--token or CADRE_SERVE_TOKEN)",
		}}
		card.SecurityRequirements = a2a.SecurityRequirementsOptions{{"bearer": a2a.SecuritySchemeScopes{}}}
	}
	for _, e := range s.cfg.Runtime.Agents() {
		if !e.Active || e.Err != nil || e.Agent.Hidden {
			continue
		}
		card.Skills = append(card.Skills, a2a.AgentSkill{
			ID: e.Agent.Name, Name: e.Agent.Name, Description: e.Agent.Description,
			Tags: []string{"subagent"},
			// The main agent picks the subagent; naming it is how a
			// message asks for it.
			Examples: []string{"Use the " + e.Agent.Name + " agent to …"},
		})
	}
	slices.SortFunc(card.Skills, func(a, b a2a.AgentSkill) int { return strings.Compare(a.ID, b.ID) })
	return card
}

func (s *Server) serveCard(w http.ResponseWriter, r *http.Request) {
	base := s.cfg.BaseURL
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	body, err := json.Marshal(s.Card(base))
	if err != nil {
		http.Error(w, "agent card: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	// Clients in browsers read the card from other origins.
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_, _ = w.Write(body) // a client gone away has nobody to tell

}

func checkBaseURL(s string) error {
	i := strings.Index(s, "://")
	if i < 0 {
		return errors.New("want http://host[:port] or https://…")
	}
	if scheme := s[:i]; scheme != "http" && scheme != "https" {
		return fmt.Errorf("scheme %q: want http or https", scheme)
	}
	return nil
}

// SessionID is the cadre session a context id names: the context id itself
// when it is a UUID (the ids a2a-go and cadre make), else a UUID derived
// from it.
func SessionID(contextID string) string {
	if id, err := uuid.Parse(contextID); err == nil && len(contextID) == 36 {
		return id.String()
	}
	return ids.Derive("a2a-context", contextID)
}
