package session

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
)

// Mem is an Index held in memory: for tests, and for embedders that want no
// state on disk. The zero value is not usable; call NewMem.
type Mem struct {
	mu       sync.Mutex
	sessions map[string]Info
}

var _ Index = (*Mem)(nil)

// NewMem returns an empty in-memory Index.
func NewMem() *Mem {
	return &Mem{sessions: make(map[string]Info)}
}

func normalize(s Info) Info {
	s.Created = NormalizeTime(s.Created)
	s.Updated = NormalizeTime(s.Updated)
	return s
}

// CreateSession implements Index.
func (m *Mem) CreateSession(ctx context.Context, s Info) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("create session %q: %w", s.ID, err)
	}
	if s.ID == "" {
		return fmt.Errorf("create session: the id is empty")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[s.ID]; ok {
		return fmt.Errorf("create session %q: a session with this id already exists", s.ID)
	}
	m.sessions[s.ID] = normalize(s)
	return nil
}

// UpdateSession implements Index. fn runs with the Mem locked.
func (m *Mem) UpdateSession(ctx context.Context, id string, fn func(*Info) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("update session %q: %w", id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return fmt.Errorf("update session %q: %w", id, ErrNotFound)
	}
	if err := fn(&s); err != nil {
		return fmt.Errorf("update session %q: %w", id, err)
	}
	if s.ID != id {
		return fmt.Errorf("update session %q: the update changed the id to %q", id, s.ID)
	}
	m.sessions[id] = normalize(s)
	return nil
}

// GetSession implements Index.
func (m *Mem) GetSession(ctx context.Context, id string) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, fmt.Errorf("get session %q: %w", id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return Info{}, fmt.Errorf("get session %q: %w", id, ErrNotFound)
	}
	return s, nil
}

// ListSessions implements Index.
func (m *Mem) ListSessions(ctx context.Context, f Filter) ([]Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	m.mu.Lock()
	out := make([]Info, 0, len(m.sessions))
	for _, s := range m.sessions {
		if f.ParentID != nil && s.ParentID != *f.ParentID || f.Cwd != "" && s.Cwd != f.Cwd || len(f.Statuses) > 0 && !slices.Contains(f.Statuses, s.Status) {
			continue
		}
		if !f.EndedBefore.IsZero() && (s.ParentID == "" || !s.Status.Ended() || !s.Updated.Before(f.EndedBefore) || Archived(s.TranscriptPath)) {
			continue
		}
		out = append(out, s)
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b Info) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}
