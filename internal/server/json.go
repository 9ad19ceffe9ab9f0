package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// maxBody bounds a request body: a prompt with a few images fits.
const maxBody = 32 << 20

// errBadRequest marks an error that is the client's: 400.
var errBadRequest = errors.New("bad request")

type badRequest struct{ err error }

func (e badRequest) Error() string   { return e.err.Error() }
func (e badRequest) Unwrap() []error { return []error{e.err, errBadRequest} }

func bad(format string, args ...any) error { return badRequest{fmt.Errorf(format, args...)} }

// writeJSON answers with v as JSON. It is encoded before the status goes
// out, so that a value that cannot be encoded (a bug) is a 500 saying so,
// not a 200 with half a body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{Error: "encode the answer: " + err.Error()}) // a string always encodes
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n')) // a client gone away has nobody to tell
}

type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, errorBody{Error: err.Error()})
}

// fail writes err with the status its kind calls for.
func fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errBadRequest):
		writeError(w, http.StatusBadRequest, err)
	case errors.Is(err, cadre.ErrNotFound):
		writeError(w, http.StatusNotFound, err)
	case errors.Is(err, errConflict):
		writeError(w, http.StatusConflict, err)
	case errors.Is(err, errUnavailable):
		writeError(w, http.StatusServiceUnavailable, err)
	default:
		writeError(w, http.StatusInternalServerError, err)
	}
}

// decode reads a JSON body into v, refusing unknown fields, so that a
// misspelt field is an error rather than silently ignored.
func decode(r *http.Request, v any) error {
	body := http.MaxBytesReader(nil, r.Body, maxBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return bad("the request body is empty: want a JSON object")
		}
		return bad("the request body: %v", err)
	}
	if dec.More() {
		return bad("the request body holds more than one JSON value")
	}
	return nil
}

func errorJSON(err error) []byte { return mustJSON(errorBody{Error: err.Error()}) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return errorJSON(err)
	}
	return b
}

type runJSON struct {
	ID        string     `json:"id"`
	SessionID string     `json:"session_id"`
	Started   time.Time  `json:"started"`
	Ended     *time.Time `json:"ended,omitempty"`
	Running   bool       `json:"running"`
	// State is the main agent's: running (in a turn), idle (between
	// turns of an open run), or how the run ended.
	State string `json:"state"`
	// Background counts the tree's background runs not yet finished.
	Background int `json:"background_running"`
	// NumTurns and MainTokens are the main agent's own: its model turns
	// (counted as each turn ends) and its replies' tokens.
	NumTurns   int   `json:"num_turns"`
	MainTokens int64 `json:"main_tokens"`
	Events     int   `json:"events"`
	Pending    int   `json:"pending_approvals"`
	// Tokens and CostUSD are the whole tree's so far (the main agent and
	// every subagent), growing during a turn (Conversation.Stats); the
	// session record's figures change only when a turn ends.
	Tokens  int64       `json:"tokens"`
	CostUSD llm.Cost    `json:"cost_usd"` // null when unknown
	Result  *resultJSON `json:"result,omitempty"`
}

type resultJSON struct {
	IsError  bool     `json:"is_error"`
	Result   string   `json:"result"`
	Errors   []string `json:"errors,omitempty"`
	CostUSD  llm.Cost `json:"total_cost_usd"` // null when unknown
	NumTurns int      `json:"num_turns"`
}

type approvalJSON struct {
	ID              uint64          `json:"id"`
	RunID           string          `json:"run_id"`
	Tool            string          `json:"tool"`
	Target          string          `json:"target,omitempty"`
	Input           json.RawMessage `json:"input,omitempty"`
	Reason          string          `json:"reason,omitempty"`
	SessionID       string          `json:"session_id"`
	ToolUseID       string          `json:"tool_use_id"`
	Agent           string          `json:"agent"`
	AgentID         string          `json:"agent_id,omitempty"`
	ParentToolUseID string          `json:"parent_tool_use_id,omitempty"`
	Suggestions     []string        `json:"suggestions"`
	// Diff is the unified diff an Edit or Write would make.
	Diff string `json:"diff,omitempty"`
}

func approvalsOf(runID string, as []cadre.Approval) []approvalJSON {
	out := make([]approvalJSON, 0, len(as))
	for _, a := range as {
		q := a.Request
		out = append(out, approvalJSON{
			ID: a.ID, RunID: runID, Tool: q.Tool, Target: q.Target, Input: q.Input, Reason: q.Reason,
			SessionID: q.SessionID, ToolUseID: q.ToolUseID, Agent: q.Agent, AgentID: q.AgentID,
			ParentToolUseID: q.ParentToolUseID, Suggestions: append([]string{}, q.Suggestions...),
		})
		if q.Change != nil {
			out[len(out)-1].Diff = q.Change.Diff
		}
	}
	return out
}

type sessionJSON struct {
	ID             string    `json:"id"`
	ParentID       string    `json:"parent_id,omitempty"`
	Agent          string    `json:"agent"`
	Key            string    `json:"key,omitempty"`
	Title          string    `json:"title"`
	Cwd            string    `json:"cwd"`
	Status         string    `json:"status"`
	Created        time.Time `json:"created"`
	Updated        time.Time `json:"updated"`
	Usage          llm.Usage `json:"usage"`
	Tokens         int64     `json:"tokens"`
	CostUSD        llm.Cost  `json:"cost_usd"` // null when unknown
	NumTurns       int       `json:"num_turns"`
	Model          string    `json:"model,omitempty"` // "provider:model"
	TranscriptPath string    `json:"transcript_path"`
	Live           bool      `json:"live"` // a run of this server is its conversation
	// State is, for a live run's session, its main agent's (runJSON's);
	// for a subagent's session in a live run, the run's as the agents
	// tree has it (queued, running, or how it ended).
	State string `json:"state,omitempty"`
	// Pending counts the permission requests its agent waits on.
	Pending     int    `json:"pending_approvals"`
	Description string `json:"description,omitempty"`
	// Depth and RootID are set with ?order=tree: 0 and the session's own
	// id for a session whose parent is not listed.
	Depth  int    `json:"depth"`
	RootID string `json:"root_id,omitempty"`
}

func sessionOf(s cadre.Session) sessionJSON {
	return sessionJSON{
		ID: s.ID, ParentID: s.ParentID, Agent: s.Agent, Key: s.Key, Title: s.Title, Cwd: s.Cwd, Status: string(s.Status),
		Created: s.Created, Updated: s.Updated, Usage: s.Usage, Tokens: s.Usage.Total(), CostUSD: s.CostUSD, NumTurns: s.NumTurns,
		Model: s.Model, TranscriptPath: s.TranscriptPath,
	}
}

type subagentJSON struct {
	Index           int        `json:"index"`
	ID              string     `json:"id"`
	Key             string     `json:"key"`
	ParentSessionID string     `json:"parent_session_id"`
	ToolUseID       string     `json:"tool_use_id,omitempty"`
	Agent           string     `json:"agent"`
	Name            string     `json:"name,omitempty"`
	Description     string     `json:"description"`
	Depth           int        `json:"depth"`
	Background      bool       `json:"background"`
	Status          string     `json:"status"`
	Running         bool       `json:"running"`
	Started         time.Time  `json:"started"`
	Ended           *time.Time `json:"ended,omitempty"`
	Tokens          int64      `json:"tokens"`
	ToolUses        int        `json:"tool_uses"`
	CurrentTool     string     `json:"current_tool,omitempty"`
	Result          string     `json:"result,omitempty"`
	Error           string     `json:"error,omitempty"`
}

func subagentOf(s cadre.SubagentRun) subagentJSON {
	out := subagentJSON{
		Index: s.Index, ID: s.ID, Key: s.Key, ParentSessionID: s.ParentSessionID, ToolUseID: s.ToolUseID, Agent: s.Agent,
		Name: s.Name, Description: s.Description, Depth: s.Depth, Background: s.Background, Status: string(s.Status),
		Running: s.Running(), Started: s.Started, Tokens: s.Tokens, ToolUses: s.ToolUses, CurrentTool: s.CurrentTool,
		Result: s.Result, Error: s.Error,
	}
	if !s.Ended.IsZero() {
		t := s.Ended
		out.Ended = &t
	}
	return out
}

type activityJSON struct {
	ToolUseID       string     `json:"tool_use_id"`
	ParentToolUseID string     `json:"parent_tool_use_id,omitempty"`
	Depth           int        `json:"depth"`
	AgentID         string     `json:"agent_id,omitempty"`
	AgentType       string     `json:"agent_type,omitempty"`
	Description     string     `json:"description,omitempty"`
	Color           string     `json:"color,omitempty"`
	Background      bool       `json:"background"`
	Started         time.Time  `json:"started"`
	Ended           *time.Time `json:"ended,omitempty"`
	Status          string     `json:"status,omitempty"`
	Summary         string     `json:"summary,omitempty"`
	Tokens          int64      `json:"tokens"`
	ToolUses        int        `json:"tool_uses"`
	Tool            string     `json:"tool,omitempty"`
	Calls           []callJSON `json:"calls"`
}

type callJSON struct {
	ID   string    `json:"id"`
	Name string    `json:"name"`
	At   time.Time `json:"at"`
}

func callsOf(cs []cadre.ActivityCall) []callJSON {
	out := make([]callJSON, 0, len(cs))
	for _, c := range cs {
		out = append(out, callJSON{ID: c.ID, Name: c.Name, At: c.At})
	}
	return out
}

// activityBody is GET /api/runs/{id}/activity: the main agent's span and
// calls, and its subagent runs at any depth, in start order.
type activityBody struct {
	Main mainJSON       `json:"main"`
	Runs []activityJSON `json:"runs"`
}

type mainJSON struct {
	SessionID string     `json:"session_id"`
	Started   time.Time  `json:"started"`
	Ended     *time.Time `json:"ended,omitempty"`
	Calls     []callJSON `json:"calls"`
}

func activityOf(a cadre.ActivityRun) activityJSON {
	out := activityJSON{
		ToolUseID: a.ToolUseID, ParentToolUseID: a.ParentToolUseID, Depth: a.Depth, AgentID: a.AgentID, AgentType: a.AgentType,
		Description: a.Description, Color: a.Color, Background: a.Background, Started: a.Started, Status: string(a.Status),
		Summary: a.Summary, Tokens: a.Tokens, ToolUses: a.ToolUses, Tool: a.Tool, Calls: callsOf(a.Calls),
	}
	if a.Done() {
		t := a.Ended
		out.Ended = &t
	}
	return out
}
