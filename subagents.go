package cadre

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// What a front end needs to inspect and steer a conversation's subagents:
// OpenClaw's /subagents list|stop|log|info|send and /stop, for the TUI, the
// SDK and a server alike.

// SubagentRun is one subagent run of a conversation's tree, at any depth.
type SubagentRun struct {
	// Index is the run's number in the conversation ("#" in /subagents):
	// 1 for the first subagent started, in start order, so it never
	// changes while the conversation lasts.
	Index           int
	ID              string // agent id = task id = session id
	Key             string // "agent:<type>:subagent:<id>"
	ParentSessionID string
	ToolUseID       string // the call that started it ("" for a run of an earlier process)
	Agent           string // its type
	Name            string // its SendMessage name, if any
	Description     string
	Depth           int // 1 for the main agent's children
	Background      bool
	Status          TaskStatus
	Started, Ended  time.Time // Ended is zero while it runs
	Tokens          int64
	ToolUses        int
	CurrentTool     string // the tool it called last, while it runs
	Result, Error   string
}

// Running reports whether the run is still going.
func (s SubagentRun) Running() bool { return !s.Status.Terminal() }

// SubagentDetails is /subagents info: the run, its session and its
// cleanup setting.
type SubagentDetails struct {
	SubagentRun
	Prompt         string
	SessionID      string
	TranscriptPath string
	Created        time.Time
	CostUSD        llm.Cost
	// Cleanup is what becomes of the session after a background run:
	// "keep" (archived after ArchiveAfterMinutes) or "delete" (archived
	// right after its notification).
	Cleanup             string
	ArchiveAfterMinutes int
	OutputFile          string
}

// Subagents lists the subagent runs of the conversation's tree, running
// and finished, numbered in start order (SubagentRun.Index). A resumed
// conversation lists its earlier runs first, from the store.
func (c *Conversation) Subagents(ctx context.Context) ([]SubagentRun, error) {
	live := c.sr.caller.Group.Runs()
	here := map[string]bool{}
	for _, r := range live {
		here[r.ID] = true
	}
	earlier, err := c.r.storedRuns(ctx, c.target, here)
	if err != nil {
		return nil, err
	}
	out := earlier
	for _, r := range live {
		out = append(out, runOf(r))
	}
	for i := range out {
		out[i].Index = i + 1
	}
	return out, nil
}

func runOf(r subagent.Run) SubagentRun {
	out := SubagentRun{
		ID: r.ID, Key: "agent:" + r.Agent + ":subagent:" + r.ID, ParentSessionID: r.ParentSessionID, ToolUseID: r.ToolUseID,
		Agent: r.Agent, Name: r.Name, Description: r.Description, Depth: r.Depth, Background: r.Background,
		Status: TaskStatus(r.Status), Started: r.Started, Ended: r.Ended, Tokens: r.Tokens, ToolUses: r.ToolUses,
		Result: r.Result, Error: r.Err,
	}
	if out.Running() {
		out.CurrentTool = r.LastTool
	}
	return out
}

// storedRuns are the child sessions of root's tree that this process did
// not start (skip, and its own runs still launching), oldest first: the
// runs of an earlier process.
func (r *Runtime) storedRuns(ctx context.Context, root string, skip map[string]bool) ([]SubagentRun, error) {
	if err := r.app.Settled(ctx); err != nil {
		return nil, err
	}
	recs, err := r.app.DB.ListTasks(ctx, task.Filter{RootSessionID: root})
	if err != nil {
		return nil, err
	}
	tasks := map[string]task.Task{}
	for _, t := range recs {
		tasks[t.ID] = t
	}
	own := r.app.Owner.ID()
	var out []SubagentRun
	var walk func(parent string, depth int) error
	walk = func(parent string, depth int) error {
		children, err := r.app.DB.ListSessions(ctx, session.Filter{ParentID: &parent})
		if err != nil {
			return err
		}
		for _, s := range children {
			// A running session this process owns that its group does
			// not list yet is a launch in progress (it is recorded just
			// before the group lists it), not an earlier process's run:
			// listed here first, it would take another run's number.
			launching := s.Owner == own && s.Status == session.StatusRunning
			if !skip[s.ID] && !launching {
				out = append(out, storedRun(s, tasks[s.ID], depth))
			}
			// Depth is bounded by subagents.maxSpawnDepth; a cycle in a
			// damaged index cannot make this loop.
			if depth < subagent.MaxDepth+1 {
				if err := walk(s.ID, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, 1); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b SubagentRun) int { return a.Started.Compare(b.Started) })
	return out, nil
}

// storedRun describes a child session from its records: its task record's
// when it ran in the background (rec.ID set), else the session's own.
func storedRun(s session.Info, rec task.Task, depth int) SubagentRun {
	run := SubagentRun{
		ID: s.ID, Key: cmp.Or(s.Key, "agent:"+s.Agent+":subagent:"+s.ID), ParentSessionID: s.ParentID, Agent: s.Agent,
		Description: s.Title, Depth: depth, Started: s.Created, Tokens: s.Usage.Total(),
	}
	switch s.Status {
	case session.StatusRunning:
		run.Status = TaskRunning
	case session.StatusFailed:
		run.Status = TaskFailed
	case session.StatusKilled:
		run.Status = TaskKilled
	default:
		run.Status = TaskCompleted
	}
	if run.Status.Terminal() {
		run.Ended = s.Updated
	}
	if rec.ID != "" {
		run.Background, run.Name, run.Description, run.ToolUseID = true, rec.Name, rec.Description, rec.ToolUseID
		run.Status, run.Result, run.Error, run.ToolUses = TaskStatus(rec.Status), rec.Result, rec.Error, rec.ToolUses
		run.Started = cmp.Or(rec.Started, rec.Created)
		run.Ended = rec.Finished
	}
	return run
}

// FindSubagent resolves a /subagents target as OpenClaw does: "#N" or N
// (the run's Index), "last" (the newest), a session key, a name, an id, or
// a unique prefix of an id.
func (c *Conversation) FindSubagent(ctx context.Context, target string) (SubagentRun, error) {
	runs, err := c.Subagents(ctx)
	if err != nil {
		return SubagentRun{}, err
	}
	return findRun(runs, target)
}

func findRun(runs []SubagentRun, target string) (SubagentRun, error) {
	target = strings.TrimSpace(target)
	if target == "" {
		return SubagentRun{}, errors.New("name a subagent: #N, last, its id or its name (/subagents list shows them)")
	}
	if len(runs) == 0 {
		return SubagentRun{}, errors.New("this conversation has started no subagent yet")
	}
	if target == "last" {
		// The newest is the last launched, as the numbers count: two
		// runs launched together can stamp their start times in the
		// other order.
		newest := runs[0]
		for _, r := range runs[1:] {
			if r.Index > newest.Index {
				newest = r
			}
		}
		return newest, nil
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(target, "#")); err == nil {
		if n < 1 || n > len(runs) {
			return SubagentRun{}, fmt.Errorf("no subagent #%d: this conversation has %d (#1–#%d)", n, len(runs), len(runs))
		}
		return runs[n-1], nil
	}
	for _, r := range runs {
		if r.ID == target || r.Key == target {
			return r, nil
		}
	}
	for i := len(runs) - 1; i >= 0; i-- { // a reused name means the newest run
		if r := runs[i]; r.Name != "" && strings.EqualFold(r.Name, target) {
			return r, nil
		}
	}
	var found []SubagentRun
	for _, r := range runs {
		if strings.HasPrefix(r.ID, target) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return SubagentRun{}, fmt.Errorf("no subagent %q in this conversation (/subagents list shows them)", target)
	}
	return SubagentRun{}, fmt.Errorf("%q is the start of %d subagent ids: give more of it, or its #", target, len(found))
}

// StopSubagent stops the run target names (FindSubagent), with every run
// it started, transitively; "all" or "*" stops every running subagent of
// the conversation. It returns the ids stopped, once they have ended.
func (c *Conversation) StopSubagent(ctx context.Context, target string) ([]string, error) {
	if t := strings.TrimSpace(target); t == "all" || t == "*" {
		return c.r.app.Subagents.StopAll(ctx, c.target)
	}
	run, err := c.FindSubagent(ctx, target)
	if err != nil {
		return nil, err
	}
	ids, err := c.r.app.Subagents.StopTree(ctx, c.target, run.ID)
	if err != nil {
		return nil, fmt.Errorf("stop subagent #%d (%s): %w", run.Index, run.ID, err)
	}
	return ids, nil
}

// Abort is OpenClaw's /stop: it stops the turn in progress and every
// running subagent of the conversation, background ones included, and
// returns once they have ended. The conversation goes on; messages queued
// meanwhile wait for the next turns. It returns the subagents stopped.
func (c *Conversation) Abort(ctx context.Context) ([]string, error) {
	c.Interrupt()
	return c.r.app.Subagents.StopAll(ctx, c.target)
}

// SendSubagent gives text to the run target names, with SendMessage's
// meaning: queued for a running agent, which reads it after its current
// step; a finished one is resumed in the background with it. The reply
// says which happened.
func (c *Conversation) SendSubagent(ctx context.Context, target, text string) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the message is empty")
	}
	run, err := c.FindSubagent(ctx, target)
	if err != nil {
		return "", err
	}
	return c.r.app.Subagents.SendMessage(ctx, c.sr.caller, run.ID, text)
}

// SubagentInfo is /subagents info: the run target names, its session and
// its cleanup setting.
func (c *Conversation) SubagentInfo(ctx context.Context, target string) (SubagentDetails, error) {
	run, err := c.FindSubagent(ctx, target)
	if err != nil {
		return SubagentDetails{}, err
	}
	d := SubagentDetails{SubagentRun: run, SessionID: run.ID, ArchiveAfterMinutes: c.r.app.Cfg.Settings.Subagents.ArchiveAfter()}
	if info, err := c.r.app.DB.GetSession(ctx, run.ID); err == nil {
		d.TranscriptPath, d.Created, d.CostUSD = info.TranscriptPath, info.Created, info.CostUSD
	} else if !errors.Is(err, session.ErrNotFound) {
		return SubagentDetails{}, err
	}
	if rec, err := c.r.app.DB.GetTask(ctx, run.ID); err == nil {
		d.Prompt, d.OutputFile, d.CostUSD = rec.Prompt, rec.OutputFile, rec.CostUSD
		d.Created = cmp.Or(d.Created, rec.Created)
	} else if !errors.Is(err, task.ErrNotFound) {
		return SubagentDetails{}, err
	}
	d.Cleanup = c.r.app.Subagents.Cleanup()
	for _, r := range c.sr.caller.Group.Runs() {
		if r.ID == run.ID {
			d.Prompt = cmp.Or(d.Prompt, r.Prompt)
			d.Cleanup = cmp.Or(r.Cleanup, d.Cleanup)
		}
	}
	if d.Prompt == "" {
		// A foreground run of an earlier process left no record of its
		// task but its transcript, which opens with it.
		if _, entries, err := c.r.Session(ctx, run.ID); err == nil {
			for _, e := range entries {
				if e.Type == "user" && e.Message != nil {
					d.Prompt = e.Message.Text()
					break
				}
			}
		}
	}
	return d, nil
}

// LogMessage is one message of a subagent's log.
type LogMessage struct {
	Role string // "user" or "assistant"
	Time time.Time
	// Text is the message's text; with tool calls asked for, each call
	// ("→ Tool input") and result ("← text") is a line of it too.
	Text string
}

// Log limits, as OpenClaw's /subagents log has them.
const (
	DefaultLogLimit = 20
	MaxLogLimit     = 200
)

// SubagentLog is /subagents log: the last limit messages (0 means
// DefaultLogLimit, at most MaxLogLimit) of the run target names, read from
// its transcript, with its tool calls and results when tools is set.
// Messages left with no text are skipped.
func (c *Conversation) SubagentLog(ctx context.Context, target string, limit int, tools bool) (SubagentRun, []LogMessage, error) {
	switch {
	case limit < 0:
		return SubagentRun{}, nil, fmt.Errorf("log limit must be positive, got %d", limit)
	case limit == 0:
		limit = DefaultLogLimit
	case limit > MaxLogLimit:
		limit = MaxLogLimit
	}
	run, err := c.FindSubagent(ctx, target)
	if err != nil {
		return SubagentRun{}, nil, err
	}
	_, entries, err := c.r.Session(ctx, run.ID)
	if err != nil {
		return run, nil, fmt.Errorf("log of subagent #%d: %w", run.Index, err)
	}
	var out []LogMessage
	for _, e := range entries {
		if e.Message == nil || (e.Type != "user" && e.Type != "assistant") {
			continue
		}
		if text := logText(*e.Message, tools); text != "" {
			out = append(out, LogMessage{Role: e.Type, Time: e.Timestamp, Text: text})
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return run, out, nil
}

// logText is a message as a log shows it: its text, and with tools its
// calls and results, one line each (results clipped).
func logText(m llm.Message, tools bool) string {
	var lines []string
	for _, b := range m.Content {
		switch b.Type {
		case llm.BlockText:
			if t := strings.TrimSpace(b.Text); t != "" {
				lines = append(lines, t)
			}
		case llm.BlockToolUse:
			if tools {
				lines = append(lines, "→ "+b.Name+" "+clipLine(string(b.Input), 200))
			}
		case llm.BlockToolResult:
			if tools {
				mark := "← "
				if b.IsError {
					mark = "← error: "
				}
				lines = append(lines, mark+clipLine(b.ResultText(), 200))
			}
		}
	}
	return strings.Join(lines, "\n")
}

// clipLine is s on one line, at most n runes.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
