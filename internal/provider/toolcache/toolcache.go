package toolcache

import (
	"bytes"
	"errors"
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
	entries []*entry[T] // most recently used first
}

type entry[T any] struct {
	specs []llm.ToolSpec // a private copy: the caller may reuse its slices
	// ready is closed once value (or err) is set: callers that find the
	// entry while it is being built wait for it.
	ready chan struct{}
	value T
	err   error
}

// Get returns what build made of a set equal to specs (same names,
// descriptions and schema bytes, in the same order), calling build on a
// miss. An error is returned, not kept. The value is shared between
// callers: they must not change it.
//
// Callers that miss on one set at the same time build it once: the ten
// children of one message send their first requests together, with one
// set, and would otherwise each build it and fill the cache with copies
// that push out the sets in use.
func (c *Cache[T]) Get(specs []llm.ToolSpec, build func([]llm.ToolSpec) (T, error)) (T, error) {
	c.mu.Lock()
	for i, e := range c.entries {
		if equal(e.specs, specs) {
			// Move to the front, so the sets in use stay.
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			c.mu.Unlock()
			<-e.ready
			return e.value, e.err
		}
	}
	own := make([]llm.ToolSpec, len(specs))
	for i, s := range specs {
		own[i] = llm.ToolSpec{Name: s.Name, Description: s.Description, InputSchema: slices.Clone(s.InputSchema)}
	}
	e := &entry[T]{specs: own, ready: make(chan struct{})}
	c.entries = slices.Insert(c.entries, 0, e)
	if len(c.entries) > size {
		c.entries = c.entries[:size]
	}
	c.mu.Unlock()
	// Built outside the lock: other sets are served meanwhile. The waiters
	// are released however build ends, a panic included.
	var v T
	err := errBuildPanicked
	defer func() {
		c.mu.Lock()
		e.value, e.err = v, err
		if err != nil {
			c.entries = slices.DeleteFunc(c.entries, func(o *entry[T]) bool { return o == e })
		}
		c.mu.Unlock()
		close(e.ready)
	}()
	v, err = build(specs)
	return v, err
}

var errBuildPanicked = errors.New("toolcache: building the tool set panicked")

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
