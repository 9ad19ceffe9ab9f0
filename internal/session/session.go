package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/ids"

	"github.com/cadre-dev/cadre/record"
)

// Status is the lifecycle state of a session: the SDK's
// record.SessionStatus, the same type.
type Status = record.SessionStatus

const (
	StatusRunning   = record.SessionRunning
	StatusIdle      = record.SessionIdle
	StatusCompleted = record.SessionCompleted
	StatusFailed    = record.SessionFailed
	StatusKilled    = record.SessionKilled
)

// Info is the index record of a session: the SDK's record.Session, the
// same type, so that what the index returns reaches SDK users as it is.
type Info = record.Session

// Filter selects sessions in ListSessions. The zero Filter selects all.
type Filter struct {
	// ParentID, when set, keeps only the children of *ParentID; pointing at
	// "" keeps only main sessions.
	ParentID *string
	// Cwd, when not empty, keeps only sessions whose Cwd is exactly this.
	Cwd string
	// Statuses, when not empty, keeps sessions whose status is one of these
	// (the same rule as task.Filter's).
	Statuses []Status
	// Limit, when > 0, caps the number of sessions returned.
	Limit int
	// EndedBefore, when not zero, keeps only child sessions that ended
	// (completed, failed or killed) before it and whose transcripts are not
	// archived yet (their path has no ".deleted." in it): what the archive
	// sweep has left to do (DESIGN S-S3).
	EndedBefore time.Time
}

// Validate checks that every status in f is a defined one: a misspelt
// status would otherwise silently match nothing.
func (f Filter) Validate() error {
	for _, s := range f.Statuses {
		if !s.Valid() {
			return fmt.Errorf("filter: unknown status %q", s)
		}
	}
	return nil
}

// Archived reports whether a transcript path is an archived one, renamed
// to *.deleted.<timestamp> (DESIGN S-S3).
func Archived(transcriptPath string) bool { return strings.Contains(transcriptPath, ".deleted.") }

// Index is the persisted index of sessions.
//
// Implementations must be safe for concurrent use and honour ctx.
type Index interface {
	// CreateSession records a new session; an id already present is an error.
	CreateSession(ctx context.Context, s Info) error
	// UpdateSession reads the record of id, passes it to fn and stores what fn
	// left, atomically: concurrent updates (from this process or another
	// sharing the store) never lose one another's changes. If fn returns an
	// error nothing is stored and an error wrapping it is returned. fn must
	// not change the ID, must be quick and must not call back into the Index
	// (it may run while the store is locked). fn may run more than once (a
	// store may retry the update); what its last run left is stored.
	UpdateSession(ctx context.Context, id string, fn func(*Info) error) error
	// GetSession returns the record of id, or an error wrapping ErrNotFound.
	GetSession(ctx context.Context, id string) (Info, error)
	// ListSessions returns the sessions matching f, newest Updated first
	// (ties: greater ID first, which for time-ordered ids is the newer). A
	// filter with an unknown status is an error.
	ListSessions(ctx context.Context, f Filter) ([]Info, error)
}

// ErrNotFound is wrapped by Index errors about a session that does not exist.
var ErrNotFound = errors.New("session not found")

// ErrInvalidID is wrapped by ValidateID's errors.
var ErrInvalidID = errors.New("invalid session id")

// MaxIDLen is the longest session id ValidateID accepts.
const MaxIDLen = ids.MaxLen

// ValidateID checks a session id that came from outside (--resume, a
// subagent's session_id) before it is used to build a path: 1 to MaxIDLen
// characters from [A-Za-z0-9_-]. That excludes separators and dots, so no id
// can climb out of the sessions directory ("../x") or into a subfolder.
func ValidateID(id string) error { return ids.Check(id, ErrInvalidID) }

// NormalizeTime is the form in which an Index keeps a timestamp: UTC,
// truncated to the millisecond, without a monotonic reading. Implementations
// that keep times in memory use it so they answer exactly as a database does.
func NormalizeTime(t time.Time) time.Time {
	return t.UTC().Truncate(time.Millisecond)
}
