package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/permission"
)

var (
	errConflict    = errors.New("conflict")
	errUnavailable = errors.New("unavailable")
	errInvalidID   = errors.New("invalid id")
)

// maxListLimit bounds ?limit= on the lists.
const maxListLimit = 1000

// maxMode is the most a run of this server may be given: its own mode.
func (s *Server) maxMode() cadre.PermissionMode {
	if s.cfg.PermissionMode != "" {
		return s.cfg.PermissionMode
	}
	return s.rt.PermissionMode()
}

func validMode(m cadre.PermissionMode) error {
	if _, err := permission.ParseMode(string(m)); err != nil {
		return bad("permission_mode: %v", err)
	}
	return nil
}

// pathID is the path parameter name, checked as every id from outside is.
func pathID(r *http.Request, name string) (string, error) {
	v := r.PathValue(name)
	if err := ids.Check(v, errInvalidID); err != nil {
		return "", badRequest{fmt.Errorf("%s in the path: %w", name, err)}
	}
	return v, nil
}

// limitOf reads ?limit= (default def, 0 for no limit is not offered: the
// lists are bounded).
func limitOf(r *http.Request, def int) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxListLimit {
		return 0, bad("?limit=%q: want a number from 1 to %d", v, maxListLimit)
	}
	return n, nil
}

type startRequest struct {
	// Prompt is the first message; empty opens the conversation idle.
	Prompt string `json:"prompt"`
	// Resume continues this session; SessionID names a new one.
	Resume    string `json:"resume"`
	SessionID string `json:"session_id"`
	Fork      bool   `json:"fork"`
	// Model and PermissionMode replace the server's defaults.
	Model          string               `json:"model"`
	PermissionMode cadre.PermissionMode `json:"permission_mode"`
	// Close ends the run once it has answered the prompt and its
	// background subagents' notifications, as `cadre -p` does; otherwise
	// it stays open for more messages until closed or stopped.
	Close bool `json:"close"`
}

// startRun opens a conversation (new or resumed), sends its prompt and
// returns its id: 201 with the run.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	var req startRequest
	if err := decode(r, &req); err != nil {
		fail(w, err)
		return
	}
	for name, v := range map[string]string{"resume": req.Resume, "session_id": req.SessionID} {
		if v != "" {
			if err := ids.Check(v, errInvalidID); err != nil {
				fail(w, badRequest{fmt.Errorf("%s: %w", name, err)})
				return
			}
		}
	}
	if req.PermissionMode != "" {
		if err := validMode(req.PermissionMode); err != nil {
			fail(w, err)
			return
		}
		if max := s.maxMode(); !permission.Within(permission.Mode(req.PermissionMode), permission.Mode(max)) {
			writeError(w, http.StatusForbidden, fmt.Errorf("permission_mode %s is above the server's (%s): a request cannot raise it; start cadre serve with --permission-mode", req.PermissionMode, max))
			return
		}
	}
	if req.Close && strings.TrimSpace(req.Prompt) == "" {
		fail(w, bad("close without a prompt: the run would have nothing to do"))
		return
	}
	run, err := s.start(r.Context(), req)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, run.info())
}

func (s *Server) start(ctx context.Context, req startRequest) (*run, error) {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		return nil, fmt.Errorf("the server is shutting down: %w", errUnavailable)
	}
	if req.Resume != "" && !req.Fork {
		if old := s.runs[req.Resume]; (old != nil && !old.done()) || s.opening[req.Resume] {
			s.mu.Unlock()
			return nil, fmt.Errorf("session %s is running in this server already: send it a message (POST /api/runs/%s/messages): %w", req.Resume, req.Resume, errConflict)
		}
		// Held while it opens, so that two requests cannot both resume it.
		s.opening[req.Resume] = true
		defer func() {
			s.mu.Lock()
			delete(s.opening, req.Resume)
			s.mu.Unlock()
		}()
	}
	s.mu.Unlock()

	approvals := cadre.NewApprovals()
	model, mode := s.cfg.Model, s.cfg.PermissionMode
	if req.Model != "" {
		model = req.Model
	}
	if req.PermissionMode != "" {
		mode = req.PermissionMode
	}
	// The conversation lives in the server's context, not the request's.
	conv, err := s.rt.Open(s.ctx, cadre.OpenRequest{
		Resume: req.Resume, SessionID: req.SessionID, Fork: req.Fork,
		Permission: approvals.Ask, Model: model, PermissionMode: mode,
	})
	if err != nil {
		if errors.Is(err, cadre.ErrNotFound) {
			return nil, err
		}
		return nil, badRequest{fmt.Errorf("open the conversation: %w", err)}
	}
	rn := newRun(conv, approvals, time.Now())
	rn.main.prompt = req.Prompt
	rn.record = func(ctx context.Context) (cadre.Session, error) {
		t, err := s.rt.SessionTree(ctx, rn.id)
		return t.Session.Session, err
	}
	if req.Prompt != "" {
		if err := conv.Send(ctx, cadre.Message{Text: req.Prompt}); err != nil {
			conv.Stop()
			return nil, badRequest{fmt.Errorf("prompt: %w", err)}
		}
	}
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		conv.Stop()
		return nil, fmt.Errorf("the server is shutting down: %w", errUnavailable)
	}
	s.evictLocked()
	s.runs[rn.id] = rn
	s.order = append(s.order, rn)
	watch, stopWatch := context.WithCancel(s.ctx)
	s.wg.Go(func() {
		defer stopWatch()
		rn.pump()
	})
	s.wg.Go(func() { rn.watchApprovals(watch) })
	s.mu.Unlock()
	if req.Close {
		// Close waits for the end; the input is closed at once.
		s.wg.Go(func() { conv.Close() })
	}
	s.log.Debug("run started", "session", rn.id, "resume", req.Resume)
	return rn, nil
}

// evictLocked drops the oldest ended runs beyond Config.KeepEnded, so a
// long-lived server does not keep every event log. s.mu is held.
func (s *Server) evictLocked() {
	ended := 0
	for _, r := range s.order {
		if r.done() {
			ended++
		}
	}
	kept := s.order[:0]
	for _, r := range s.order {
		if ended > s.cfg.KeepEnded && r.done() {
			ended--
			if s.runs[r.id] == r {
				delete(s.runs, r.id)
			}
			continue
		}
		kept = append(kept, r)
	}
	clear(s.order[len(kept):])
	s.order = kept
}

// runOf is the run of this server holding session id, or nil.
func (s *Server) runOf(id string) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id]
}

// withRun resolves {id} to a run of this server.
func (s *Server) withRun(h func(http.ResponseWriter, *http.Request, *run)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, "id")
		if err != nil {
			fail(w, err)
			return
		}
		rn := s.runOf(id)
		if rn == nil {
			fail(w, fmt.Errorf("no run %s in this server (GET /api/runs lists them; a stored session is at /api/sessions/%s): %w", id, id, cadre.ErrNotFound))
			return
		}
		h(w, r, rn)
	}
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	runs := append([]*run(nil), s.order...)
	s.mu.Unlock()
	out := make([]runJSON, 0, len(runs))
	for i := len(runs) - 1; i >= 0; i-- { // newest first
		out = append(out, runs[i].info())
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getRun(w http.ResponseWriter, _ *http.Request, rn *run) {
	writeJSON(w, http.StatusOK, rn.info())
}

func (s *Server) getActivity(w http.ResponseWriter, _ *http.Request, rn *run) {
	writeJSON(w, http.StatusOK, rn.activityBody())
}

type messageRequest struct {
	Text   string               `json:"text"`
	Blocks []cadre.ContentBlock `json:"blocks"`
	UUID   string               `json:"uuid"`
}

// sendMessage queues a user message for a turn of its own (DESIGN §7.4):
// 202, it runs after the turns before it.
func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request, rn *run) {
	var req messageRequest
	if err := decode(r, &req); err != nil {
		fail(w, err)
		return
	}
	if rn.done() {
		fail(w, fmt.Errorf("run %s has ended: start it again with {\"resume\": %q}: %w", rn.id, rn.id, errConflict))
		return
	}
	if err := rn.conv.Send(r.Context(), cadre.Message{Text: req.Text, Blocks: req.Blocks, UUID: req.UUID}); err != nil {
		fail(w, badRequest{fmt.Errorf("message: %w", err)})
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"queued": true})
}

func (s *Server) interrupt(w http.ResponseWriter, _ *http.Request, rn *run) {
	rn.conv.Interrupt()
	writeJSON(w, http.StatusOK, map[string]any{"interrupted": true})
}

// abort is OpenClaw's /stop: the turn and every subagent stop, the
// conversation goes on.
func (s *Server) abort(w http.ResponseWriter, r *http.Request, rn *run) {
	stopped, err := rn.conv.Abort(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"stopped": nonNil(stopped)})
}

// closeRun ends the input: the run answers what is queued, waits for its
// background subagents, and ends. It returns at once.
func (s *Server) closeRun(w http.ResponseWriter, _ *http.Request, rn *run) {
	s.wg.Go(func() { rn.conv.Close() })
	writeJSON(w, http.StatusAccepted, rn.info())
}

// stopRun stops everything now, and returns once the run has ended.
func (s *Server) stopRun(w http.ResponseWriter, _ *http.Request, rn *run) {
	rn.conv.Stop()
	// The pump has read the last event once Stop returned, or is about to.
	for {
		_, ended, ch := rn.since(1 << 30)
		if ended {
			break
		}
		<-ch
	}
	writeJSON(w, http.StatusOK, rn.info())
}

func (s *Server) listSubagents(w http.ResponseWriter, r *http.Request, rn *run) {
	runs, err := rn.conv.Subagents(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	out := make([]subagentJSON, 0, len(runs))
	for _, sa := range runs {
		out = append(out, subagentOf(sa))
	}
	writeJSON(w, http.StatusOK, out)
}

// target is {target}: a subagent id, its #N or N, or a unique prefix, as
// /subagents takes them; checked for shape only.
func target(r *http.Request) (string, error) {
	t := strings.TrimSpace(r.PathValue("target"))
	if t == "" || len(t) > ids.MaxLen {
		return "", bad("subagent target %q: want its id, #N or N", t)
	}
	return t, nil
}

func (s *Server) sendSubagent(w http.ResponseWriter, r *http.Request, rn *run) {
	t, err := target(r)
	if err != nil {
		fail(w, err)
		return
	}
	var req messageRequest
	if err := decode(r, &req); err != nil {
		fail(w, err)
		return
	}
	reply, err := rn.conv.SendSubagent(r.Context(), t, req.Text)
	if err != nil {
		fail(w, subagentErr(err))
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"reply": reply})
}

func (s *Server) stopSubagent(w http.ResponseWriter, r *http.Request, rn *run) {
	t, err := target(r)
	if err != nil {
		fail(w, err)
		return
	}
	stopped, err := rn.conv.StopSubagent(r.Context(), t)
	if err != nil {
		fail(w, subagentErr(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"stopped": nonNil(stopped)})
}

// subagentErr: a target that names no run is the client's mistake.
func subagentErr(err error) error {
	if errors.Is(err, cadre.ErrNotFound) || strings.Contains(err.Error(), "no subagent") {
		return fmt.Errorf("%w: %w", err, cadre.ErrNotFound)
	}
	return badRequest{err}
}

func (s *Server) listApprovals(w http.ResponseWriter, _ *http.Request, rn *run) {
	writeJSON(w, http.StatusOK, approvalsOf(rn.id, rn.approvals.Pending()))
}

func (s *Server) allApprovals(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	runs := append([]*run(nil), s.order...)
	s.mu.Unlock()
	out := []approvalJSON{}
	for _, rn := range runs {
		out = append(out, approvalsOf(rn.id, rn.approvals.Pending())...)
	}
	writeJSON(w, http.StatusOK, out)
}

type answerRequest struct {
	// Decision is "allow" (this call), "always" (this call, and such
	// calls for the rest of the conversation: the request's suggestions
	// become allow rules) or "deny".
	Decision string `json:"decision"`
	// Message, on a denial, is what the model is told.
	Message string `json:"message"`
}

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request, rn *run) {
	n, err := strconv.ParseUint(r.PathValue("n"), 10, 64)
	if err != nil || n == 0 {
		fail(w, bad("approval id %q: want the number GET /api/runs/%s/approvals gives", r.PathValue("n"), rn.id))
		return
	}
	var req answerRequest
	if err := decode(r, &req); err != nil {
		fail(w, err)
		return
	}
	var d cadre.PermissionDecision
	switch req.Decision {
	case "allow":
		d.Allow = true
	case "always":
		d.Allow = true
		for _, a := range rn.approvals.Pending() {
			if a.ID == n {
				d.Remember = a.Request.Suggestions
			}
		}
	case "deny":
		d.Message = req.Message
		if strings.TrimSpace(d.Message) == "" {
			d.Message = "The user denied this tool call."
		}
	default:
		fail(w, bad("decision %q: want allow, always or deny", req.Decision))
		return
	}
	if !rn.approvals.Answer(n, d) {
		fail(w, fmt.Errorf("approval %d of run %s is not waiting (answered already, or its caller gave up): %w", n, rn.id, cadre.ErrNotFound))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"answered": n, "decision": req.Decision, "remembered": nonNil(d.Remember)})
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	limit, err := limitOf(r, 100)
	if err != nil {
		fail(w, err)
		return
	}
	q := r.URL.Query()
	// ?cwd= keeps one directory's sessions; by default all.
	list, err := s.rt.Sessions(r.Context(), q.Get("cwd"), limit)
	if err != nil {
		fail(w, err)
		return
	}
	out := make([]sessionJSON, 0, len(list))
	waiting := s.waiting()
	subs := s.liveSubagentStates(r)
	switch q.Get("order") {
	case "", "newest":
		for _, ss := range list {
			sj := s.session(ss)
			sj.Pending = waiting[ss.ID]
			if sj.State == "" {
				sj.State = subs[ss.ID]
			}
			out = append(out, sj)
		}
	case "tree":
		// As `cadre sessions` shows them: each session followed by its
		// subagents', depth first, with each one's depth and root.
		root := ""
		for _, row := range cadre.SessionRows(list) {
			if row.Depth == 0 {
				root = row.ID
			}
			sj := s.session(row.Session)
			sj.Depth, sj.RootID, sj.Pending = row.Depth, root, waiting[row.ID]
			if sj.State == "" {
				sj.State = subs[row.ID]
			}
			out = append(out, sj)
		}
	default:
		fail(w, bad("?order=%q: want newest or tree", q.Get("order")))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) session(ss cadre.Session) sessionJSON {
	out := sessionOf(ss)
	rn := s.runOf(ss.ID)
	out.Live = rn != nil && !rn.done()
	if out.Live {
		// The record's figures change when the conversation ends; the
		// run's own are the main agent's so far.
		rn.mu.Lock()
		out.State = rn.stateLocked()
		out.NumTurns, out.Tokens = rn.main.turns, rn.main.tokens
		if out.Title == "" && out.ParentID == "" {
			// A main session is titled when it ends; until then, its
			// first prompt says what it is.
			out.Title = firstLine(rn.main.prompt, 100)
		}
		if rn.main.results > 0 {
			out.CostUSD = rn.ownCostLocked()
		}
		rn.mu.Unlock()
	}
	return out
}

// liveSubagentStates are the states of the subagent runs of this server's
// live runs, by session id, as the agents tree names them: a session
// record says running from its launch, while the run may still wait for
// a place in the lane.
func (s *Server) liveSubagentStates(r *http.Request) map[string]string {
	s.mu.Lock()
	runs := append([]*run(nil), s.order...)
	s.mu.Unlock()
	out := map[string]string{}
	for _, rn := range runs {
		if rn.done() {
			continue
		}
		subs, err := rn.conv.Subagents(r.Context())
		if err != nil {
			continue // the list shows the records' statuses
		}
		for _, sa := range subs {
			out[sa.ID] = subagentState(sa)
		}
	}
	return out
}

// waiting counts the permission requests waiting for an answer, by the
// session of the agent that asked: what the sessions list badges.
func (s *Server) waiting() map[string]int {
	s.mu.Lock()
	runs := append([]*run(nil), s.order...)
	s.mu.Unlock()
	out := map[string]int{}
	for _, rn := range runs {
		for _, a := range rn.approvals.Pending() {
			out[a.Request.SessionID]++
		}
	}
	return out
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		fail(w, err)
		return
	}
	ss, entries, err := s.rt.Session(r.Context(), id)
	if err != nil {
		fail(w, err)
		return
	}
	if entries == nil {
		entries = []cadre.TranscriptEntry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"session": s.session(ss), "transcript": entries})
}

type treeJSON struct {
	Session  sessionJSON   `json:"session"`
	Parent   *sessionJSON  `json:"parent,omitempty"`
	Children []sessionJSON `json:"children"`
	Siblings []sessionJSON `json:"siblings"`
}

func (s *Server) sessionTree(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		fail(w, err)
		return
	}
	t, err := s.rt.SessionTree(r.Context(), id)
	if err != nil {
		fail(w, err)
		return
	}
	node := func(n cadre.SessionNode) sessionJSON {
		out := s.session(n.Session)
		out.Description = n.Description
		return out
	}
	out := treeJSON{Session: node(t.Session), Children: []sessionJSON{}, Siblings: []sessionJSON{}}
	if t.Parent != nil {
		p := node(*t.Parent)
		out.Parent = &p
	}
	for _, c := range t.Children {
		out.Children = append(out.Children, node(c))
	}
	for _, c := range t.Siblings {
		out.Siblings = append(out.Siblings, node(c))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) {
	limit, err := limitOf(r, 100)
	if err != nil {
		fail(w, err)
		return
	}
	root := r.URL.Query().Get("session")
	if root != "" {
		if err := ids.Check(root, errInvalidID); err != nil {
			fail(w, badRequest{fmt.Errorf("?session=: %w", err)})
			return
		}
	}
	ts, err := s.rt.Tasks(r.Context(), root, limit)
	if err != nil {
		fail(w, err)
		return
	}
	if ts == nil {
		ts = []cadre.Task{}
	}
	writeJSON(w, http.StatusOK, ts)
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		fail(w, err)
		return
	}
	t, err := s.rt.Task(r.Context(), id)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (s *Server) taskOutput(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		fail(w, err)
		return
	}
	out, err := s.rt.TaskOutput(r.Context(), id)
	if err != nil {
		fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, out)
}

func (s *Server) stopTask(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		fail(w, err)
		return
	}
	msg, err := s.rt.StopTask(r.Context(), id)
	if err != nil {
		if !errors.Is(err, cadre.ErrNotFound) {
			err = fmt.Errorf("%w: %w", err, errConflict)
		}
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"stopped": id, "message": msg})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// firstLine is s's first non-empty line, cut to at most n runes.
func firstLine(s string, n int) string {
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			if r := []rune(l); len(r) > n {
				return string(r[:n-1]) + "…"
			}
			return l
		}
	}
	return ""
}
