package tasklist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Status is an item's state. A deleted item is removed from its list, so
// Deleted is only ever asked for, never stored.
type Status string

const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Completed  Status = "completed"
	Deleted    Status = "deleted"
)

// Valid reports whether s is a status an item may be given.
func (s Status) Valid() bool {
	switch s {
	case Pending, InProgress, Completed, Deleted:
		return true
	}
	return false
}

// Item is one task of a team's list, in Claude Code's field names.
type Item struct {
	ID          string         `json:"id"`
	Subject     string         `json:"subject"`
	Description string         `json:"description"`
	ActiveForm  string         `json:"activeForm,omitempty"`
	Status      Status         `json:"status"`
	Owner       string         `json:"owner,omitempty"`
	Blocks      []string       `json:"blocks"`
	BlockedBy   []string       `json:"blockedBy"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	// CreatedBy is the agent that created the item ("main" for the lead).
	CreatedBy string    `json:"createdBy,omitempty"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
}

// List is one team's list as a store holds it.
type List struct {
	ID string
	// Next is the number the next created item gets; ids are "1", "2", …
	// as Claude Code numbers them, never reused within a list.
	Next  int
	Items []Item // in creation order
	// Roster is the team that works the list, kept beside it so that a
	// team outlives the process that led it: nil until a teammate joins.
	Roster *Roster
}

// Roster is a team's name and its members, in join order.
type Roster struct {
	Team    string   `json:"team"`
	Members []Member `json:"members"`
}

// EncodeRoster is how stores keep a roster: its JSON, nil for none.
func EncodeRoster(r *Roster) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("roster: %w", err)
	}
	return b, nil
}

// DecodeRoster reads what EncodeRoster wrote; empty is no roster.
func DecodeRoster(b []byte) (*Roster, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var r Roster
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("a stored roster: %w", err)
	}
	return &r, nil
}

// Member is one teammate on a roster.
type Member struct {
	Name  string `json:"name"`
	Agent string `json:"agent,omitempty"` // its agent type
	ID    string `json:"id,omitempty"`    // its agent id, once its run was launched
	Call  string `json:"call,omitempty"`  // the Agent call that added it
	// Plan is "planning" while it may not leave plan mode before the lead
	// approves a plan, "approved" once the lead did; "" for a teammate
	// added without mode "plan".
	Plan string `json:"plan,omitempty"`
}

// Item returns the item with this id.
func (l *List) Item(id string) (*Item, bool) {
	for i := range l.Items {
		if l.Items[i].ID == id {
			return &l.Items[i], true
		}
	}
	return nil, false
}

// Blockers are the ids of the items that block it and are not completed
// yet: an item with blockers cannot be claimed.
func (l *List) Blockers(it Item) []string {
	var out []string
	for _, id := range it.BlockedBy {
		if b, ok := l.Item(id); ok && b.Status != Completed {
			out = append(out, id)
		}
	}
	return out
}

// Store keeps the task lists of teams.
type Store interface {
	// GetList returns a list; one that was never written is empty
	// (Next 1, no items), not an error.
	GetList(ctx context.Context, id string) (List, error)
	// UpdateList applies fn to the list under the store's lock: nothing
	// else reads it for update or writes it between fn's read and the
	// write, across processes and nodes. fn returning an error leaves the
	// list as it was and UpdateList returns that error. fn may run more
	// than once (a store retries through a lost connection), so it must
	// only change the list it is given.
	UpdateList(ctx context.Context, id string, fn func(*List) error) (List, error)
}

// ErrNotFound is returned for an item that is not in its list.
var ErrNotFound = errors.New("no such task")

// Limits on what a model may write into a list.
const (
	MaxSubject     = 200
	MaxDescription = 20_000
	MaxActiveForm  = 200
	MaxMetadata    = 16 << 10 // bytes of JSON
	MaxItems       = 1_000
	MaxEdges       = 100 // ids in one item's blocks or blockedBy
)

// ValidListID checks a list id (a team's): printable, no separators that
// would let it name another team's list in a key or path.
func ValidListID(id string) error {
	if id == "" || len(id) > 200 || !utf8.ValidString(id) {
		return fmt.Errorf("task list id %q: want 1-200 characters of UTF-8", id)
	}
	if strings.ContainsAny(id, "/\\\x00\n\r") {
		return fmt.Errorf("task list id %q: no slashes, NUL or line breaks", id)
	}
	return nil
}

// ParseID accepts "3" or "#3" and returns "3".
func ParseID(s string) (string, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || strconv.Itoa(n) != s {
		return "", fmt.Errorf("task id %q: want a task number such as \"1\"", s)
	}
	return s, nil
}
