package tool

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/cadre-dev/cadre/llm"
	"github.com/google/jsonschema-go/jsonschema"
)

// Set is an ordered pool of tools with unique names: exactly what one
// session's model is offered. A Set is immutable once built and safe for
// concurrent use; each tool's Info is read once, when the Set is built.
type Set struct {
	tools []Tool
	// specs are the tools' model-facing specs, in order, built with the
	// Set: every model call of every session offers them, so they are
	// made once, not per call.
	specs  []llm.ToolSpec
	byName map[string]Tool

	mu      sync.Mutex
	schemas map[string]*jsonschema.Resolved // for tools that don't validate themselves
}

// NewSet builds a Set; two tools with one name is an error.
func NewSet(tools ...Tool) (*Set, error) {
	s := &Set{specs: make([]llm.ToolSpec, len(tools)), byName: make(map[string]Tool, len(tools))}
	infos := make([]Info, len(tools))
	for i, t := range tools {
		infos[i] = t.Info()
		name := infos[i].Name
		if name == "" {
			return nil, fmt.Errorf("tool set: a tool has no name")
		}
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("tool set: two tools are named %q", name)
		}
		s.byName[name] = t
		s.specs[i] = infos[i].Spec()
	}
	for i, t := range tools {
		for _, alias := range infos[i].Aliases {
			if _, dup := s.byName[alias]; dup {
				return nil, fmt.Errorf("tool set: alias %q of %s is already a tool name", alias, infos[i].Name)
			}
			s.byName[alias] = t
		}
	}
	// The caller's slice stays the caller's: a Set never changes.
	s.tools = slices.Clone(tools)
	return s, nil
}

// Tools returns the tools in order.
func (s *Set) Tools() []Tool {
	if s == nil {
		return nil
	}
	return append([]Tool(nil), s.tools...)
}

// Names returns the tool names in order.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s.specs))
	for i, sp := range s.specs {
		out[i] = sp.Name
	}
	return out
}

// Get returns the tool with this name or alias.
func (s *Set) Get(name string) (Tool, bool) {
	if s == nil {
		return nil, false
	}
	t, ok := s.byName[name]
	return t, ok
}

// Len is the number of tools.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tools)
}

// Specs returns the model-facing specs in order. The slice is the Set's
// own, made once and shared by every caller (a model request of every
// session using the Set): read it, never modify it.
func (s *Set) Specs() []llm.ToolSpec {
	if s == nil {
		return nil
	}
	return s.specs[:len(s.specs):len(s.specs)]
}

// Filter returns the tools for which keep is true, in order. When keep
// takes nothing out it returns s itself: a session's pool is filtered
// for every child, and most filters keep everything.
func (s *Set) Filter(keep func(Tool) bool) *Set {
	if s == nil {
		return &Set{byName: map[string]Tool{}}
	}
	kept := make([]bool, len(s.tools))
	n := 0
	for i, t := range s.tools {
		if kept[i] = keep(t); kept[i] {
			n++
		}
	}
	if n == len(s.tools) {
		return s
	}
	out := &Set{tools: make([]Tool, 0, n), specs: make([]llm.ToolSpec, 0, n), byName: make(map[string]Tool, n)}
	for i, t := range s.tools {
		if !kept[i] {
			continue
		}
		out.tools = append(out.tools, t)
		out.specs = append(out.specs, s.specs[i])
		out.byName[s.specs[i].Name] = t
		for _, alias := range t.Info().Aliases {
			out.byName[alias] = t
		}
	}
	return out
}

// Validate checks input against the named tool's schema.
func (s *Set) Validate(name string, input json.RawMessage) error {
	t, ok := s.Get(name)
	if !ok {
		return fmt.Errorf("no such tool: %s", name)
	}
	if v, ok := t.(Validating); ok {
		return v.ValidateInput(input)
	}
	rs, err := s.resolved(t.Info())
	if err != nil {
		return err
	}
	return validate(rs, input)
}

func (s *Set) resolved(info Info) (*jsonschema.Resolved, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rs, ok := s.schemas[info.Name]; ok {
		return rs, nil
	}
	var sc jsonschema.Schema
	if err := json.Unmarshal(info.InputSchema, &sc); err != nil {
		return nil, fmt.Errorf("tool %s: bad input schema: %w", info.Name, err)
	}
	rs, err := sc.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("tool %s: resolve input schema: %w", info.Name, err)
	}
	if s.schemas == nil {
		s.schemas = map[string]*jsonschema.Resolved{}
	}
	s.schemas[info.Name] = rs
	return rs, nil
}
