package tablerow

import (
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// Scanner is what a scan needs: database/sql's Row and Rows, pgx's Row and
// Rows.
type Scanner interface{ Scan(dest ...any) error }

// SessionColumns are the sessions table's columns, id first.
const SessionColumns = `id, parent_id, agent, session_key, title, cwd, status, created_ms, updated_ms,
	input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens,
	cost_usd, num_turns, transcript_path, owner, cost_unknown, model`

// ScanSession reads a row of SessionColumns.
func ScanSession(r Scanner) (session.Info, error) {
	var (
		s                  session.Info
		status             string
		createdMS, updated int64
		cost               float64
		unknown            bool
	)
	err := r.Scan(&s.ID, &s.ParentID, &s.Agent, &s.Key, &s.Title, &s.Cwd, &status, &createdMS, &updated,
		&s.Usage.InputTokens, &s.Usage.OutputTokens, &s.Usage.CacheCreationInputTokens, &s.Usage.CacheReadInputTokens,
		&cost, &s.NumTurns, &s.TranscriptPath, &s.Owner, &unknown, &s.Model)
	s.CostUSD = costOf(cost, unknown)
	s.Status = session.Status(status)
	s.Created = time.UnixMilli(createdMS).UTC()
	s.Updated = time.UnixMilli(updated).UTC()
	return s, err
}

// SessionValues are s's columns after id, in SessionColumns order.
func SessionValues(s session.Info) []any {
	return []any{s.ParentID, s.Agent, s.Key, s.Title, s.Cwd, string(s.Status),
		s.Created.UnixMilli(), s.Updated.UnixMilli(),
		s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.CacheCreationInputTokens, s.Usage.CacheReadInputTokens,
		costUSD(s.CostUSD), s.NumTurns, s.TranscriptPath, s.Owner, !s.CostUSD.Known(), s.Model}
}

// costOf is the cost a row's cost_usd and cost_unknown columns hold.
func costOf(usd float64, unknown bool) llm.Cost {
	c := llm.USD(usd)
	if unknown {
		c = c.Add(llm.UnknownCost())
	}
	return c
}

// costUSD is c's cost_usd column: what its priced part cost, with
// cost_unknown saying whether that is all.
func costUSD(c llm.Cost) float64 {
	v, _ := c.USD()
	return v
}

// TaskColumns are the tasks table's columns, id first.
const TaskColumns = `id, kind, agent, name, description, prompt,
	parent_session_id, root_session_id, child_session_id, tool_use_id,
	status, result, error,
	input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens,
	cost_usd, tool_uses, output_file, notified, cancel_requested, owner,
	heartbeat_ms, created_ms, started_ms, finished_ms, progress, archived, cost_unknown, remote_task_id`

// ToMS is how a task's time is stored: unix milliseconds, NULL (nil) for
// the zero time.
func ToMS(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	ms := t.UnixMilli()
	return &ms
}

// FromMS reads a time ToMS stored.
func FromMS(ms *int64) time.Time {
	if ms == nil {
		return time.Time{}
	}
	return time.UnixMilli(*ms).UTC()
}

// ScanTask reads a row of TaskColumns.
func ScanTask(r Scanner) (task.Task, error) {
	var (
		t                                   task.Task
		kind, status                        string
		heartbeat, created, started, finish *int64
		cost                                float64
		unknown                             bool
		remoteTask                          *string
	)
	err := r.Scan(&t.ID, &kind, &t.Agent, &t.Name, &t.Description, &t.Prompt,
		&t.ParentSessionID, &t.RootSessionID, &t.ChildSessionID, &t.ToolUseID,
		&status, &t.Result, &t.Error,
		&t.Usage.InputTokens, &t.Usage.OutputTokens, &t.Usage.CacheCreationInputTokens, &t.Usage.CacheReadInputTokens,
		&cost, &t.ToolUses, &t.OutputFile, &t.Notified, &t.CancelRequested, &t.Owner,
		&heartbeat, &created, &started, &finish, &t.Progress, &t.Archived, &unknown, &remoteTask)
	t.CostUSD = costOf(cost, unknown)
	if remoteTask != nil {
		t.RemoteTaskID = *remoteTask
	}
	t.Kind = task.Kind(kind)
	t.Status = task.Status(status)
	t.Heartbeat, t.Created, t.Started, t.Finished = FromMS(heartbeat), FromMS(created), FromMS(started), FromMS(finish)
	return t, err
}

// TaskValues are t's columns after id, in TaskColumns order.
func TaskValues(t task.Task) []any {
	return []any{string(t.Kind), t.Agent, t.Name, t.Description, t.Prompt,
		t.ParentSessionID, t.RootSessionID, t.ChildSessionID, t.ToolUseID,
		string(t.Status), t.Result, t.Error,
		t.Usage.InputTokens, t.Usage.OutputTokens, t.Usage.CacheCreationInputTokens, t.Usage.CacheReadInputTokens,
		costUSD(t.CostUSD), t.ToolUses, t.OutputFile, t.Notified, t.CancelRequested, t.Owner,
		ToMS(t.Heartbeat), ToMS(t.Created), ToMS(t.Started), ToMS(t.Finished), t.Progress, t.Archived, !t.CostUSD.Known(), nullable(t.RemoteTaskID)}
}

// nullable stores "" as NULL: a column that most rows leave unset.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// NormalizeTask is t as a read gives it back after storing it: its times
// cut to milliseconds, in UTC.
func NormalizeTask(t task.Task) task.Task {
	t.Heartbeat = FromMS(ToMS(t.Heartbeat))
	t.Created = FromMS(ToMS(t.Created))
	t.Started = FromMS(ToMS(t.Started))
	t.Finished = FromMS(ToMS(t.Finished))
	return t
}

// Results is a result set: database/sql's *Rows, pgx's Rows.
type Results interface {
	Scanner
	Next() bool
	Err() error
}

// Collect scans every row of rs with scan; an empty result is an empty,
// non-nil slice. The caller closes rs.
func Collect[T any](rs Results, scan func(Scanner) (T, error)) ([]T, error) {
	out := []T{}
	for rs.Next() {
		v, err := scan(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
