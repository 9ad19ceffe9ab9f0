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

// Changed returns the positions of the values that differ between before
// and after, two rows' values of one table (SessionValues, TaskValues):
// the columns an update needs to set.
func Changed(before, after []any) []int {
	var idx []int
	for i := range before {
		if !same(before[i], after[i]) {
			idx = append(idx, i)
		}
	}
	return idx
}

// same reports whether two column values are equal: the comparable
// scalars of the values, or the pointers of a column that may be NULL
// (*int64 for a time, *string), compared by what they point to.
func same(a, b any) bool {
	switch pa := a.(type) {
	case *int64:
		return samePointee(pa, b)
	case *string:
		return samePointee(pa, b)
	}
	return a == b
}

// samePointee reports whether b is a *T pointing to what pa points to,
// both nil included.
func samePointee[T comparable](pa *T, b any) bool {
	pb, ok := b.(*T)
	return ok && (pa == nil) == (pb == nil) && (pa == nil || *pa == *pb)
}
