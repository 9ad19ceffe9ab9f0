package task

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Mem is a Store held in memory: for tests, and for embedders that want no
// state on disk. The zero value is not usable; call NewMem.
type Mem struct {
	mu    sync.Mutex
	tasks map[string]Task
}

var _ Store = (*Mem)(nil)

// NewMem returns an empty in-memory Store.
func NewMem() *Mem {
	return &Mem{tasks: make(map[string]Task)}
}

// normalizeTime keeps what a database keeps: milliseconds, UTC, no
// monotonic reading; the zero time stays zero.
func normalizeTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}

func normalize(t Task) Task {
	t.Heartbeat = normalizeTime(t.Heartbeat)
	t.Created = normalizeTime(t.Created)
	t.Started = normalizeTime(t.Started)
	t.Finished = normalizeTime(t.Finished)
	return t
}

// CreateTask implements Store.
func (m *Mem) CreateTask(ctx context.Context, t Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("create task %q: %w", t.ID, err)
	}
	if err := Validate(t); err != nil {
		return fmt.Errorf("create task: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tasks[t.ID]; ok {
		return fmt.Errorf("create task %q: a task with this id already exists", t.ID)
	}
	m.tasks[t.ID] = normalize(t)
	return nil
}

// GetTask implements Store.
func (m *Mem) GetTask(ctx context.Context, id string) (Task, error) {
	if err := ctx.Err(); err != nil {
		return Task{}, fmt.Errorf("get task %q: %w", id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return Task{}, fmt.Errorf("get task %q: %w", id, ErrNotFound)
	}
	return t, nil
}

// UpdateTask implements Store. fn runs with the Mem locked.
func (m *Mem) UpdateTask(ctx context.Context, id string, fn func(*Task) error) (Task, error) {
	return m.update(ctx, id, Fields(fn))
}

// Transition implements Store. fn runs with the Mem locked.
func (m *Mem) Transition(ctx context.Context, id string, fn func(*Task) (Event, error)) (Task, error) {
	return m.update(ctx, id, Step(fn))
}

func (m *Mem) update(ctx context.Context, id string, fn func(*Task) error) (Task, error) {
	if err := ctx.Err(); err != nil {
		return Task{}, fmt.Errorf("update task %q: %w", id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return Task{}, fmt.Errorf("update task %q: %w", id, ErrNotFound)
	}
	if err := fn(&t); err != nil {
		return Task{}, fmt.Errorf("update task %q: %w", id, err)
	}
	if t.ID != id {
		return Task{}, fmt.Errorf("update task %q: the update changed the id to %q", id, t.ID)
	}
	if err := Validate(t); err != nil {
		return Task{}, fmt.Errorf("update task %q: %w", id, err)
	}
	t = normalize(t)
	m.tasks[id] = t
	return t, nil
}

// ListTasks implements Store.
func (m *Mem) ListTasks(ctx context.Context, f Filter) ([]Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	m.mu.Lock()
	out := []Task{}
	for _, t := range m.tasks {
		if f.RootSessionID != "" && t.RootSessionID != f.RootSessionID ||
			f.ParentSessionID != "" && t.ParentSessionID != f.ParentSessionID ||
			f.Owner != "" && t.Owner != f.Owner ||
			len(f.Statuses) > 0 && !slices.Contains(f.Statuses, t.Status) ||
			!f.FinishedBefore.IsZero() && (t.Finished.IsZero() || !t.Finished.Before(f.FinishedBefore)) ||
			f.Unarchived && t.Archived {
			continue
		}
		out = append(out, t)
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b Task) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// MarkNotified implements Store.
func (m *Mem) MarkNotified(ctx context.Context, id string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("mark task %q notified: %w", id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	switch {
	case !ok:
		return false, fmt.Errorf("mark task %q notified: %w", id, ErrNotFound)
	case !t.Status.Terminal():
		return false, fmt.Errorf("mark task %q notified: %w (status %s)", id, ErrNotTerminal, t.Status)
	case t.Notified:
		return false, nil
	}
	t.Notified = true
	m.tasks[id] = t
	return true, nil
}
