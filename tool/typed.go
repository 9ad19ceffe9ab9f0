package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Typed is a Tool whose input is the Go type In. Its schema is inferred from
// In's json and jsonschema struct tags unless Meta.InputSchema is set.
type Typed[In any] struct {
	Meta Info
	// Run does the work.
	Run func(ctx context.Context, env Env, in In) (Result, error)
	// TargetOf, if set, names what permission specifiers match (see Targeted).
	TargetOf func(env Env, in In) string

	once   sync.Once
	info   Info
	schema *jsonschema.Schema // inferred by init; nil when Meta gave one
	err    error              // init's

	// The schema is resolved (compiled for validation) on the first
	// validation, not with Info: a run offers every tool and calls few.
	resolveOnce sync.Once
	resolved    *jsonschema.Resolved
	resolveErr  error
	// proto, set by With, is the tool whose resolved schema this one
	// shares.
	proto *Typed[In]
}

// New returns a Typed tool.
func New[In any](meta Info, run func(ctx context.Context, env Env, in In) (Result, error)) *Typed[In] {
	return &Typed[In]{Meta: meta, Run: run}
}

// With returns a tool like t with other Info and Run, sharing t's schema,
// which is inferred and resolved once: a runtime that builds a variant of
// one tool for every session (a description that lists that session's
// agents) pays for the schema only once.
func (t *Typed[In]) With(meta Info, run func(ctx context.Context, env Env, in In) (Result, error)) *Typed[In] {
	t.init()
	proto := t
	if t.proto != nil {
		proto = t.proto
	}
	n := &Typed[In]{Meta: meta, Run: run, TargetOf: t.TargetOf, proto: proto}
	n.once.Do(func() {
		n.info, n.schema, n.err = meta, t.schema, t.err
		if len(meta.InputSchema) == 0 {
			n.info.InputSchema = t.info.InputSchema
		}
	})
	return n
}

func (t *Typed[In]) init() {
	t.once.Do(func() {
		t.info = t.Meta
		if len(t.Meta.InputSchema) > 0 {
			return // decoded by resolve, on the first validation
		}
		s, err := jsonschema.For[In](nil)
		if err != nil {
			t.err = fmt.Errorf("tool %s: infer input schema: %w", t.Meta.Name, err)
			return
		}
		raw, err := json.Marshal(s)
		if err != nil {
			t.err = fmt.Errorf("tool %s: encode input schema: %w", t.Meta.Name, err)
			return
		}
		t.schema, t.info.InputSchema = s, raw
	})
}

// resolve returns the schema compiled for validation, compiling it on
// first use.
func (t *Typed[In]) resolve() (*jsonschema.Resolved, error) {
	if t.proto != nil {
		return t.proto.resolve()
	}
	t.init()
	if t.err != nil {
		return nil, t.err
	}
	t.resolveOnce.Do(func() {
		s := t.schema
		if s == nil {
			s = new(jsonschema.Schema)
			if err := json.Unmarshal(t.info.InputSchema, s); err != nil {
				t.resolveErr = fmt.Errorf("tool %s: bad input schema: %w", t.Meta.Name, err)
				return
			}
		}
		if t.resolved, t.resolveErr = s.Resolve(nil); t.resolveErr != nil {
			t.resolveErr = fmt.Errorf("tool %s: resolve input schema: %w", t.Meta.Name, t.resolveErr)
		}
	})
	return t.resolved, t.resolveErr
}

// Info implements Tool.
func (t *Typed[In]) Info() Info {
	t.init()
	return t.info
}

// ValidateInput implements Validating.
func (t *Typed[In]) ValidateInput(input json.RawMessage) error {
	rs, err := t.resolve()
	if err != nil {
		return err
	}
	return validate(rs, input)
}

func (t *Typed[In]) decode(input json.RawMessage) (In, error) {
	var in In
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return in, fmt.Errorf("invalid input for %s: %w", t.Meta.Name, err)
	}
	return in, nil
}

// Call implements Tool.
func (t *Typed[In]) Call(ctx context.Context, env Env, input json.RawMessage) (Result, error) {
	in, err := t.decode(input)
	if err != nil {
		return Result{}, err
	}
	return t.Run(ctx, env, in)
}

// Target implements Targeted; it is "" when TargetOf is unset.
func (t *Typed[In]) Target(env Env, input json.RawMessage) (string, error) {
	if t.TargetOf == nil {
		return "", nil
	}
	in, err := t.decode(input)
	if err != nil {
		return "", err
	}
	return t.TargetOf(env, in), nil
}

func validate(rs *jsonschema.Resolved, input json.RawMessage) error {
	var v any
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	if err := json.Unmarshal(input, &v); err != nil {
		return fmt.Errorf("input is not valid JSON: %w", err)
	}
	if err := rs.Validate(v); err != nil {
		return fmt.Errorf("input does not match the tool's schema: %w", err)
	}
	return nil
}
