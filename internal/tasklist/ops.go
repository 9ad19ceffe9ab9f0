package tasklist

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The operations below are the whole of the list's rules: stores only run
// them under their lock. Each validates everything before it changes
// anything, so a refused call leaves the list as it was.

// CreateInput is TaskCreate's input.
type CreateInput struct {
	Subject     string         `json:"subject"`
	Description string         `json:"description"`
	ActiveForm  string         `json:"activeForm,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// Create adds a pending, unowned item to l, created by the agent named by.
func Create(l *List, in CreateInput, by string, now time.Time) (Item, error) {
	subject := strings.TrimSpace(in.Subject)
	switch {
	case subject == "":
		return Item{}, fmt.Errorf("subject: empty; give the task a brief title")
	case len(subject) > MaxSubject:
		return Item{}, fmt.Errorf("subject: %d bytes, at most %d", len(subject), MaxSubject)
	case len(in.Description) > MaxDescription:
		return Item{}, fmt.Errorf("description: %d bytes, at most %d", len(in.Description), MaxDescription)
	case len(in.ActiveForm) > MaxActiveForm:
		return Item{}, fmt.Errorf("activeForm: %d bytes, at most %d", len(in.ActiveForm), MaxActiveForm)
	case len(l.Items) >= MaxItems:
		return Item{}, fmt.Errorf("the task list has %d tasks, the most it may hold; complete or delete some first", len(l.Items))
	}
	meta, err := mergeMetadata(nil, in.Metadata)
	if err != nil {
		return Item{}, err
	}
	if l.Next < 1 {
		l.Next = 1
	}
	it := Item{
		ID: fmt.Sprint(l.Next), Subject: subject, Description: in.Description, ActiveForm: in.ActiveForm,
		Status: Pending, Blocks: []string{}, BlockedBy: []string{}, Metadata: meta,
		CreatedBy: by, Created: now, Updated: now,
	}
	l.Next++
	l.Items = append(l.Items, it)
	return it, nil
}

// UpdateInput is TaskUpdate's input; a nil or empty field is left as it is.
type UpdateInput struct {
	ID           string         `json:"taskId"`
	Subject      *string        `json:"subject,omitempty"`
	Description  *string        `json:"description,omitempty"`
	ActiveForm   *string        `json:"activeForm,omitempty"`
	Status       *Status        `json:"status,omitempty"`
	AddBlocks    []string       `json:"addBlocks,omitempty"`
	AddBlockedBy []string       `json:"addBlockedBy,omitempty"`
	Owner        *string        `json:"owner,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

// Change is what an update did.
type Change struct {
	// Item is the item after the update (before it, when deleted).
	Item Item
	// Fields are the fields that changed, in Claude Code's names.
	Fields []string
	// From and To are set when the status changed.
	From, To Status
	Deleted  bool
	// Claimed is set when this update gave the item its owner.
	Claimed bool
	// Unblocked are the items whose last open blocker this update
	// completed or deleted: they may be claimed now.
	Unblocked []string
}

// Update applies in to l as the agent named by. Claiming is the one
// guarded step: an owner is set only on an unowned, unblocked, pending
// item (or kept by the agent that has it); in_progress on an unowned item
// claims it for by.
func Update(l *List, in UpdateInput, by string, now time.Time) (Change, error) {
	id, err := ParseID(in.ID)
	if err != nil {
		return Change{}, err
	}
	cur, ok := l.Item(id)
	if !ok {
		return Change{}, fmt.Errorf("task #%s: %w", id, ErrNotFound)
	}
	if in.Status != nil && !in.Status.Valid() {
		return Change{}, fmt.Errorf("status %q: want pending, in_progress, completed or deleted", *in.Status)
	}
	before := blockedSet(l)
	if in.Status != nil && *in.Status == Deleted {
		ch := Change{Item: *cur, Fields: []string{"status"}, From: cur.Status, To: Deleted, Deleted: true}
		l.Items = slices.DeleteFunc(l.Items, func(it Item) bool { return it.ID == id })
		for i := range l.Items {
			l.Items[i].Blocks = slices.DeleteFunc(l.Items[i].Blocks, func(s string) bool { return s == id })
			l.Items[i].BlockedBy = slices.DeleteFunc(l.Items[i].BlockedBy, func(s string) bool { return s == id })
		}
		ch.Unblocked = unblocked(l, before)
		return ch, nil
	}

	// Everything is checked on a copy; l changes only at the end.
	it := clone(*cur)
	var fields []string
	set := func(name string, dst *string, v *string, limit int) error {
		if v == nil || *v == *dst {
			return nil
		}
		if len(*v) > limit {
			return fmt.Errorf("%s: %d bytes, at most %d", name, len(*v), limit)
		}
		*dst = *v
		fields = append(fields, name)
		return nil
	}
	if in.Subject != nil && strings.TrimSpace(*in.Subject) == "" {
		return Change{}, fmt.Errorf("subject: empty; a task keeps a title")
	}
	if err := set("subject", &it.Subject, in.Subject, MaxSubject); err != nil {
		return Change{}, err
	}
	if err := set("description", &it.Description, in.Description, MaxDescription); err != nil {
		return Change{}, err
	}
	if err := set("activeForm", &it.ActiveForm, in.ActiveForm, MaxActiveForm); err != nil {
		return Change{}, err
	}
	if in.Metadata != nil {
		if it.Metadata, err = mergeMetadata(it.Metadata, in.Metadata); err != nil {
			return Change{}, err
		}
		fields = append(fields, "metadata")
	}
	edges, err := newEdges(l, id, in.AddBlocks, in.AddBlockedBy)
	if err != nil {
		return Change{}, err
	}
	if len(in.AddBlocks) > 0 {
		fields = append(fields, "blocks")
	}
	if len(in.AddBlockedBy) > 0 {
		fields = append(fields, "blockedBy")
	}
	for _, e := range edges {
		if e.to == id && !slices.Contains(it.BlockedBy, e.from) {
			it.BlockedBy = append(it.BlockedBy, e.from)
		}
		if e.from == id && !slices.Contains(it.Blocks, e.to) {
			it.Blocks = append(it.Blocks, e.to)
		}
	}
	if len(it.Blocks) > MaxEdges || len(it.BlockedBy) > MaxEdges {
		return Change{}, fmt.Errorf("task #%s: at most %d dependencies each way", id, MaxEdges)
	}

	// The blockers as they will be, the new edges counted.
	open := func() []string {
		var out []string
		for _, b := range it.BlockedBy {
			if bi, ok := l.Item(b); ok && bi.Status != Completed {
				out = append(out, b)
			}
		}
		return out
	}
	claim := func(owner string) error {
		switch {
		case it.Owner == owner:
			return nil
		case it.Owner != "":
			return fmt.Errorf("task #%s is already owned by %s", id, it.Owner)
		case it.Status != Pending:
			return fmt.Errorf("task #%s is %s; only a pending task can be claimed", id, it.Status)
		}
		if b := open(); len(b) > 0 {
			return fmt.Errorf("task #%s is blocked by %s; it can be claimed once those are completed", id, hashList(b))
		}
		it.Owner = owner
		fields = append(fields, "owner")
		return nil
	}
	claimed := false
	if in.Owner != nil {
		owner := strings.TrimSpace(*in.Owner)
		if owner == "" {
			if it.Owner != "" {
				it.Owner = ""
				fields = append(fields, "owner")
			}
		} else {
			if err := claim(owner); err != nil {
				return Change{}, err
			}
			claimed = it.Owner == owner && cur.Owner != owner
		}
	}
	// Starting a task without naming its owner is a claim by the caller,
	// which fails on a task another agent owns: else a teammate acting on
	// a list read a moment earlier would be told "updated" for another's
	// task, or reopen one its owner has just completed.
	if in.Status != nil && *in.Status == InProgress && by != "" && in.Owner == nil && it.Owner != by {
		if err := claim(by); err != nil {
			return Change{}, err
		}
		claimed = true
	}
	ch := Change{}
	if in.Status != nil && *in.Status != it.Status {
		to := *in.Status
		if to == InProgress {
			if b := open(); len(b) > 0 {
				return Change{}, fmt.Errorf("task #%s is blocked by %s; it cannot start before those are completed", id, hashList(b))
			}
		}
		ch.From, ch.To = it.Status, to
		it.Status = to
		fields = append(fields, "status")
	}
	if len(fields) > 0 {
		it.Updated = now
	}
	*cur = it
	for _, e := range edges {
		other := e.from
		if e.from == id {
			other = e.to
		}
		o, _ := l.Item(other)
		if e.from == id && !slices.Contains(o.BlockedBy, id) {
			o.BlockedBy = append(o.BlockedBy, id)
			o.Updated = now
		}
		if e.to == id && !slices.Contains(o.Blocks, id) {
			o.Blocks = append(o.Blocks, id)
			o.Updated = now
		}
	}
	ch.Item, ch.Fields, ch.Claimed = clone(it), fields, claimed
	ch.Unblocked = unblocked(l, before)
	return ch, nil
}

type edge struct{ from, to string } // from blocks to

// newEdges validates the dependencies an update adds to item id: every
// other end exists, is not id itself, and no edge closes a cycle.
func newEdges(l *List, id string, blocks, blockedBy []string) ([]edge, error) {
	var out []edge
	add := func(field string, ids []string, mk func(string) edge) error {
		if len(ids) > MaxEdges {
			return fmt.Errorf("%s: %d ids, at most %d", field, len(ids), MaxEdges)
		}
		for _, raw := range ids {
			o, err := ParseID(raw)
			if err != nil {
				return fmt.Errorf("%s: %w", field, err)
			}
			if o == id {
				return fmt.Errorf("%s: task #%s cannot depend on itself", field, id)
			}
			if _, ok := l.Item(o); !ok {
				return fmt.Errorf("%s: task #%s: %w", field, o, ErrNotFound)
			}
			out = append(out, mk(o))
		}
		return nil
	}
	if err := add("addBlocks", blocks, func(o string) edge { return edge{from: id, to: o} }); err != nil {
		return nil, err
	}
	if err := add("addBlockedBy", blockedBy, func(o string) edge { return edge{from: o, to: id} }); err != nil {
		return nil, err
	}
	// A cycle: some new edge's target already reaches its source through
	// the existing edges and the other new ones.
	next := map[string][]string{}
	for _, it := range l.Items {
		next[it.ID] = append(next[it.ID], it.Blocks...)
	}
	for _, e := range out {
		next[e.from] = append(next[e.from], e.to)
	}
	for _, e := range out {
		if reaches(next, e.to, e.from) {
			return nil, fmt.Errorf("task #%s blocking #%s would close a cycle of dependencies", e.from, e.to)
		}
	}
	return out, nil
}

func reaches(next map[string][]string, from, to string) bool {
	seen := map[string]bool{}
	stack := []string{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == to {
			return true
		}
		if seen[n] {
			continue
		}
		seen[n] = true
		stack = append(stack, next[n]...)
	}
	return false
}

// blockedSet is the ids of the items that have open blockers.
func blockedSet(l *List) map[string]bool {
	out := map[string]bool{}
	for _, it := range l.Items {
		if len(l.Blockers(it)) > 0 {
			out[it.ID] = true
		}
	}
	return out
}

// unblocked are the items that were blocked before and are not now, in
// list order.
func unblocked(l *List, before map[string]bool) []string {
	var out []string
	for _, it := range l.Items {
		if before[it.ID] && len(l.Blockers(it)) == 0 {
			out = append(out, it.ID)
		}
	}
	return out
}

// mergeMetadata merges add into m (a nil value deletes the key) and checks
// the size of the result.
func mergeMetadata(m, add map[string]any) (map[string]any, error) {
	if len(add) == 0 {
		return m, nil
	}
	out := maps.Clone(m)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range add {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	if len(b) > MaxMetadata {
		return nil, fmt.Errorf("metadata: %d bytes of JSON, at most %d", len(b), MaxMetadata)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// clone is it with slices and metadata of its own.
func clone(it Item) Item {
	it.Blocks = append([]string{}, it.Blocks...)
	it.BlockedBy = append([]string{}, it.BlockedBy...)
	it.Metadata = maps.Clone(it.Metadata)
	return it
}

// Clone is a deep copy of l, which a store hands out so that no caller
// shares its slices.
func (l List) Clone() List {
	out := l
	out.Items = make([]Item, len(l.Items))
	for i, it := range l.Items {
		out.Items[i] = clone(it)
	}
	if l.Roster != nil {
		r := *l.Roster
		r.Members = slices.Clone(r.Members)
		out.Roster = &r
	}
	return out
}

func hashList(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "#" + id
	}
	return strings.Join(out, ", ")
}
