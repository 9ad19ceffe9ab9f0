package toolcache

import (
	"bytes"
	"slices"
	"sync"

	"github.com/cadre-dev/cadre/llm"
)

// size bounds the sets a Cache holds: a process offers a few (the main
// agent's, one per kind of subagent), and a caller that builds a new set
// for every request only ever misses.
const size = 16

// Cache maps tool sets to what an adapter built from them. The zero value
// is ready; it is safe for concurrent use.
type Cache[T any] struct {
	mu      sync.Mutex
	entries []entry[T] // most recently used first
}

type entry[T any] struct {
	specs []llm.ToolSpec // a private copy: the caller may reuse its slices
	value T
}

// Get returns what build made of a set equal to specs (same names,
// descriptions and schema bytes, in the same order), calling build on a
// miss. An error is returned, not kept. The value is shared between
// callers: they must not change it.
func (c *Cache[T]) Get(specs []llm.ToolSpec, build func([]llm.ToolSpec) (T, error)) (T, error) {
	c.mu.Lock()
	for i, e := range c.entries {
		if equal(e.specs, specs) {
			// Move to the front, so the sets in use stay.
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			c.mu.Unlock()
			return e.value, nil
		}
	}
	c.mu.Unlock()
	// Built outside the lock: two callers missing at once both build, and
	// the second entry is a harmless duplicate soon dropped.
	v, err := build(specs)
	if err != nil {
		return v, err
	}
	own := make([]llm.ToolSpec, len(specs))
	for i, s := range specs {
		own[i] = llm.ToolSpec{Name: s.Name, Description: s.Description, InputSchema: slices.Clone(s.InputSchema)}
	}
	c.mu.Lock()
	c.entries = slices.Insert(c.entries, 0, entry[T]{specs: own, value: v})
	if len(c.entries) > size {
		c.entries = c.entries[:size]
	}
	c.mu.Unlock()
	return v, nil
}

func equal(a, b []llm.ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description {
			return false
		}
	}
	for i := range a {
		if !bytes.Equal(a[i].InputSchema, b[i].InputSchema) {
			return false
		}
	}
	return true
}
