package tasklist

import (
	"context"
	"sync"
)

// Mem is a Store in memory, for a process without a database and for tests.
type Mem struct {
	mu    sync.Mutex
	lists map[string]List
}

var _ Store = (*Mem)(nil)

// NewMem returns an empty store.
func NewMem() *Mem { return &Mem{lists: map[string]List{}} }

// GetList implements Store.
func (m *Mem) GetList(ctx context.Context, id string) (List, error) {
	if err := ValidListID(id); err != nil {
		return List{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.get(id), nil
}

func (m *Mem) get(id string) List {
	if l, ok := m.lists[id]; ok {
		return l.Clone()
	}
	return List{ID: id, Next: 1}
}

// UpdateList implements Store.
func (m *Mem) UpdateList(ctx context.Context, id string, fn func(*List) error) (List, error) {
	if err := ValidListID(id); err != nil {
		return List{}, err
	}
	if err := ctx.Err(); err != nil {
		return List{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.get(id)
	if err := fn(&l); err != nil {
		return List{}, err
	}
	l.ID = id
	m.lists[id] = l.Clone()
	return l, nil
}
