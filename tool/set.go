package tool

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/cadre-dev/cadre/llm"
	"github.com/google/jsonschema-go/jsonschema"
)

// Set is an ordered pool of tools with unique names: exactly what one
// session's model is offered. A Set is immutable once built and safe for
// concurrent use.
type Set struct {
	tools  []Tool
	byName map[string]Tool

	mu      sync.Mutex
	schemas map[string]*jsonschema.Resolved // for tools that don't validate themselves
}

// NewSet builds a Set; two tools with one name is an error.
func NewSet(tools ...Tool) (*Set, error) {
	s := &Set{byName: make(map[string]Tool, len(tools))}
	for _, t := range tools {
		name := t.Info().Name
		if name == "" {
			return nil, fmt.Errorf("tool set: a tool has no name")
		}
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("tool set: two tools are named %q", name)
		}
		s.byName[name] = t
		s.tools = append(s.tools, t)
	}
	for _, t := range tools {
		for _, alias := range t.Info().Aliases {
			if _, dup := s.byName[alias]; dup {
				return nil, fmt.Errorf("tool set: alias %q of %s is already a tool name", alias, t.Info().Name)
			}
			s.byName[alias] = t
		}
	}
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
	out := make([]string, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.Info().Name
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

// Specs returns the model-facing specs in order.
func (s *Set) Specs() []llm.ToolSpec {
	if s == nil {
		return nil
	}
	out := make([]llm.ToolSpec, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.Info().Spec()
	}
	return out
}

// Filter returns the tools for which keep is true, in order.
func (s *Set) Filter(keep func(Tool) bool) *Set {
	out := &Set{byName: map[string]Tool{}}
	if s == nil {
		return out
	}
	for _, t := range s.tools {
		if keep(t) {
			out.tools = append(out.tools, t)
			out.byName[t.Info().Name] = t
			for _, alias := range t.Info().Aliases {
				out.byName[alias] = t
			}
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
