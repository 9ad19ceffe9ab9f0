package tablerow

import (
	"strings"
	"time"
	"unsafe"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
)

// What both stores need of the rows beyond scanning and writing them:
// the columns by name (to build their UPDATEs) and what a row they
// remember weighs and looks like once stored (sqlite's rows.go,
// postgres's known.go).

// SessionColumnNames and TaskColumnNames are SessionColumns and
// TaskColumns split into names, id first. Read-only.
var (
	SessionColumnNames = columnNames(SessionColumns)
	TaskColumnNames    = columnNames(TaskColumns)
)

func columnNames(list string) []string {
	names := strings.Split(list, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
	}
	return names
}

// NormalizeSession is s as a read gives it back after storing it: its
// times cut to milliseconds, in UTC.
func NormalizeSession(s session.Info) session.Info {
	s.Created = time.UnixMilli(s.Created.UnixMilli()).UTC()
	s.Updated = time.UnixMilli(s.Updated.UnixMilli()).UTC()
	return s
}

// TaskSize is about how many bytes t takes in memory: the struct and its
// text, which a prompt or a result can make long.
func TaskSize(t *task.Task) int {
	return int(unsafe.Sizeof(*t)) + len(t.ID) + len(t.Agent) + len(t.Name) + len(t.Description) + len(t.Prompt) +
		len(t.ParentSessionID) + len(t.RootSessionID) + len(t.ChildSessionID) + len(t.ToolUseID) +
		len(t.Result) + len(t.Progress) + len(t.Error) + len(t.OutputFile) + len(t.Owner) + len(t.RemoteTaskID)
}

// SessionSize is TaskSize for a session.
func SessionSize(s *session.Info) int {
	return int(unsafe.Sizeof(*s)) + len(s.ID) + len(s.ParentID) + len(s.Agent) + len(s.Key) + len(s.Title) +
		len(s.Cwd) + len(s.TranscriptPath) + len(s.Owner) + len(s.Model)
}
