package output

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/llm"
)

// stream is what a stream-json writer remembers between events so that its
// lines read as Claude Code's: tool names by call id (the shape of their
// results), the usage counted so far (each result's is its own turn's),
// how many results were written, the background tasks running, and
// whether the turn in progress answers a notification.
type stream struct {
	tools   map[string]string
	turns   turnUsage
	results int
	// origin is the notification the turn in progress answers, if any.
	origin *originJSON
	// background are the background tasks running, in start order.
	background runningTasks
	// changed holds the event of the newest change to background not yet
	// written: a burst of starts or ends is one background_tasks_changed
	// line, written before the next line of another kind. One line per
	// change would list every task again each time — a thousand children
	// launched in one turn made half a million entries.
	changed *cadre.Event
	// listed is when the last background_tasks_changed line was written
	// (its event's time): a long list waits out bigListGap after it.
	listed time.Time
	// line is the buffer backgroundTasks puts its line together in, kept
	// for the next: at 10,000 tasks a line is megabytes, and a new one
	// each time was most of what a run allocated (1.9 of 3.2 GB).
	line []byte
}

// originJSON says what started a turn other than a user's message.
type originJSON struct {
	Kind     string `json:"kind"`
	Producer string `json:"producer"`
	RunID    string `json:"runId"`
}

type backgroundTaskJSON struct {
	TaskID   string `json:"task_id"`
	RunID    string `json:"run_id"`
	TaskType string `json:"task_type"`
	// SubagentType is absent for a shell (local_bash), as in Claude Code.
	SubagentType string `json:"subagent_type,omitempty"`
	Description  string `json:"description"`
}

// rawLine is a line written as it is, newline included: one put together
// from JSON encoded before (backgroundTasks). It is the stream's own
// buffer, valid until the next call of lines: write it before then.
type rawLine []byte

type taskPatchJSON struct {
	Status  string `json:"status"`
	EndTime int64  `json:"end_time"`
}

type taskUpdatedJSON struct {
	Type      string        `json:"type"`
	Subtype   string        `json:"subtype"`
	TaskID    string        `json:"task_id"`
	RunID     string        `json:"run_id"`
	Patch     taskPatchJSON `json:"patch"`
	UUID      string        `json:"uuid"`
	SessionID string        `json:"session_id"`
}

// permissionDeniedJSON tells a program of a call refused before anyone
// was asked (a deny rule, the mode), as Claude Code does before the call's
// result; a refusal its canUseTool made it knows already.
type permissionDeniedJSON struct {
	Type               string `json:"type"`
	Subtype            string `json:"subtype"`
	ToolName           string `json:"tool_name"`
	ToolUseID          string `json:"tool_use_id"`
	AgentID            string `json:"agent_id,omitempty"`
	DecisionReasonType string `json:"decision_reason_type"`
	Message            string `json:"message"`
	UUID               string `json:"uuid"`
	SessionID          string `json:"session_id"`
}

// syntheticUserJSON is a user line the runtime wrote, not the user: the
// message that hands the main agent a background task's notification.
type syntheticUserJSON struct {
	userJSON
	IsSynthetic bool        `json:"isSynthetic"`
	Origin      *originJSON `json:"origin"`
}

// notification reports the task a main-agent user message notifies of:
// the runtime writes those messages (a user's own are not echoed).
func notification(e cadre.Event) (taskID string, ok bool) {
	if e.Type != cadre.EventUser || e.ParentToolUseID != "" || e.Message == nil {
		return "", false
	}
	for _, b := range e.Message.Content {
		if b.Type != llm.BlockText || !strings.HasPrefix(strings.TrimSpace(b.Text), "<task-notification>") {
			return "", false
		}
		if _, rest, ok := strings.Cut(b.Text, "<task-id>"); ok {
			if id, _, ok := strings.Cut(rest, "</task-id>"); ok {
				taskID = id
			}
		}
	}
	return taskID, len(e.Message.Content) > 0
}

// The lines a writer adds (task_updated, background_tasks_changed, the
// parts of a split reply) take ids derived from their event's: the same
// output for the same events, every time.

// lines are the lines Claude Code writes for e, shown or not (a
// subagent's, without --verbose, are not): first the session's list of
// background tasks when e is a shown line that ends a burst of changes to
// it. A line left out does not end the burst — nothing was written
// between its changes — and does not take the list out with it.
func (s *stream) lines(e cadre.Event, shown bool) []any {
	var out []any
	if shown && s.changed != nil && !s.burst(e) && !s.listWaits(e) {
		out = append(out, s.backgroundTasks(*s.changed))
		s.listed, s.changed = e.Time, nil
	}
	own := s.event(e) // for what it remembers, shown or not
	if !shown {
		return out
	}
	return append(out, own...)
}

// bigList and bigListGap bound what the lists of many background tasks
// cost: a list of more than bigList bytes (some 450 tasks) is written at
// most once every bigListGap, at the first line of another kind after
// that (or at the run's end), whatever changed in between. Written at
// every other line, as a short list is, the lists of a 10,000-child run
// came to 0.2-1.1 GB of stream-json, each line most of a megabyte of
// entries that had not changed; the task_started and task_notification
// lines still tell each change as it happens.
const (
	bigList    = 64 << 10
	bigListGap = 250 * time.Millisecond
)

// listWaits reports whether the pending list is a long one that waits,
// at e, for bigListGap to pass since the last. Events without a time
// (none of the runtime's) wait for nothing.
func (s *stream) listWaits(e cadre.Event) bool {
	return s.background.size > bigList && !s.listed.IsZero() && !e.Time.IsZero() && e.Time.Sub(s.listed) < bigListGap
}

// burst reports whether e belongs to a run of task lines whose
// background_tasks_changed line waits for the run's end: a background
// task's start, the end of one listed, or a task's progress.
func (s *stream) burst(e cadre.Event) bool {
	if e.Type != cadre.EventSystem || e.Task == nil {
		return false
	}
	switch e.Subtype {
	case cadre.SubtypeTaskStarted:
		return e.Task.Background
	case cadre.SubtypeTaskNotification:
		return s.background.has(e.Task.TaskID)
	case cadre.SubtypeTaskProgress:
		// A task's progress changes no list, and comes between its start
		// and its end: ending the burst there wrote the list of every task
		// once a child at 10,000 children (2 GB of stream-json).
		return true
	}
	return false
}

// event is e's own lines.
func (s *stream) event(e cadre.Event) []any {
	if s.tools == nil {
		s.tools = map[string]string{}
	}
	e = s.turns.own(e)
	switch {
	case e.Type == cadre.EventAssistant && e.Message != nil:
		for _, b := range e.Message.Content {
			if b.Type == llm.BlockToolUse {
				s.tools[b.ID] = b.Name
			}
		}
		return s.assistant(e)
	case e.Type == cadre.EventUser:
		if id, ok := notification(e); ok {
			s.origin = &originJSON{Kind: "task-notification", Producer: "session-task", RunID: id}
			return []any{syntheticUserJSON{userJSON: userLine(e, s.tools), IsSynthetic: true, Origin: s.origin}}
		}
		if len(e.Refused) > 0 {
			var out []any
			for _, r := range e.Refused {
				out = append(out, permissionDeniedJSON{Type: "system", Subtype: "permission_denied", ToolName: r.ToolName, ToolUseID: r.ToolUseID,
					AgentID: e.AgentID, DecisionReasonType: r.ReasonType, Message: r.Message,
					UUID: ids.Derive("stream-json permission_denied", e.UUID+"/"+r.ToolUseID), SessionID: e.SessionID})
			}
			return append(out, line(e, s.tools))
		}
	case e.Type == cadre.EventResult && e.ParentToolUseID == "":
		r := resultLine(e)
		r.ResultIndex = s.results
		r.Origin = s.origin
		s.results++
		s.origin = nil
		return []any{r}
	case e.Type == cadre.EventSystem && e.Task != nil:
		return s.task(e)
	}
	return []any{line(e, s.tools)}
}

// assistant writes one line per content block, as Claude Code does: all
// but the last without a stop reason and with the usage known before the
// reply's end (its input side).
func (s *stream) assistant(e cadre.Event) []any {
	blocks := e.Message.Content
	if len(blocks) <= 1 {
		return []any{line(e, s.tools)}
	}
	out := make([]any, 0, len(blocks))
	for i, b := range blocks {
		part := e
		m := *e.Message
		m.Content = []llm.Block{b}
		part.Message = &m
		if i < len(blocks)-1 {
			a := cadre.AssistantInfo{}
			if e.Assistant != nil {
				a = *e.Assistant
			}
			a.StopReason = ""
			a.Usage.OutputTokens = 0
			part.Assistant = &a
			part.UUID = ids.Derive("stream-json block", fmt.Sprintf("%s/%d", e.UUID, i))
		}
		out = append(out, assistantLine(part))
	}
	return out
}

// task writes a task line, with the lines Claude Code writes around it:
// task_updated with the status before the notification; the list of
// background tasks, when it changes, follows the burst (lines).
func (s *stream) task(e cadre.Event) []any {
	t := e.Task
	main := line(e, s.tools)
	switch e.Subtype {
	case cadre.SubtypeTaskStarted:
		if !t.Background {
			return []any{main}
		}
		s.background.add(backgroundTaskJSON{TaskID: t.TaskID, RunID: t.TaskID, TaskType: string(t.Kind), SubagentType: t.AgentType, Description: t.Description})
		s.change(e)
		return []any{main}
	case cadre.SubtypeTaskNotification:
		end := e.Time
		if end.IsZero() {
			end = time.Now()
		}
		updated := taskUpdatedJSON{Type: "system", Subtype: "task_updated", TaskID: t.TaskID, RunID: t.TaskID,
			Patch: taskPatchJSON{Status: patchStatus(t.Status), EndTime: end.UnixMilli()}, UUID: ids.Derive("stream-json task_updated", e.UUID), SessionID: e.SessionID}
		out := []any{updated, main}
		if s.background.remove(t.TaskID) {
			s.change(e)
		}
		return out
	}
	return []any{main}
}

// change notes e as the newest change to the background tasks. Its own
// copy of e: taking the address in task would move every task event to
// the heap, not only the changes.
func (s *stream) change(e cadre.Event) { s.changed = &e }

// backgroundTasks is the background_tasks_changed line: {"type",
// "subtype", "tasks", "uuid", "session_id"}, its list put together from the
// entries' JSON (runningTasks.appendJSON) and written as it is. At 10,000
// tasks the line is half a megabyte, most of it entries that did not
// change; encoding/json would encode each again, or, given the list as
// raw JSON, scan every byte of it to check it.
func (s *stream) backgroundTasks(e cadre.Event) rawLine {
	line := slices.Grow(s.line[:0], s.background.size+200)
	line = append(line, `{"type":"system","subtype":"background_tasks_changed","tasks":`...)
	line = s.background.appendJSON(line)
	line = append(line, `,"uuid":`...)
	line = appendString(line, ids.Derive("stream-json background_tasks_changed", e.UUID))
	line = append(line, `,"session_id":`...)
	line = appendString(line, e.SessionID)
	s.line = append(line, "}\n"...)
	return s.line
}

// appendString appends s as a JSON string, as the lines' encoder writes it.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	if err := encode(&buf, s); err != nil {
		panic(err) // a string always encodes
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// patchStatus is a task's status in task_updated's words (the SDK's
// union there has killed where task_notification says stopped).
func patchStatus(s cadre.TaskStatus) string {
	switch s {
	case cadre.TaskKilled:
		return "killed"
	case cadre.TaskTimeout:
		return "failed"
	}
	return string(s)
}
