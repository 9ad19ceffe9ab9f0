package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type readInput struct {
	Path   string   `json:"path" jsonschema:"absolute path of the file to read"`
	Offset int      `json:"offset,omitempty" jsonschema:"line to start at"`
	Limit  int      `json:"limit,omitzero"`
	Tags   []string `json:"tags,omitempty"`
	Deep   bool     `json:"deep"`
}

// newRead returns a Typed tool over readInput whose Run echoes its input.
func newRead() *tool.Typed[readInput] {
	return tool.New(tool.Info{Name: "read", Description: "Reads a file.", Access: tool.AccessRead, ConcurrencySafe: true},
		func(_ context.Context, _ tool.Env, in readInput) (tool.Result, error) {
			return tool.Text(fmt.Sprintf("%s@%d", in.Path, in.Offset)), nil
		})
}

// rawTool is a minimal hand-written Tool: it does not implement Validating,
// so a Set has to compile its schema itself. Its schema can be swapped after
// the Set is built, which lets a test see whether the Set cached the first.
type rawTool struct {
	name    string
	aliases []string
	access  tool.Access
	mu      sync.Mutex
	schema  json.RawMessage
}

func (r *rawTool) Info() tool.Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	return tool.Info{Name: r.name, Aliases: r.aliases, Description: "hand-written " + r.name, InputSchema: r.schema, Access: r.access}
}

func (r *rawTool) Call(context.Context, tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.Text("ok"), nil
}

func (r *rawTool) setSchema(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.schema = json.RawMessage(s)
}

const grepSchema = `{"type":"object","properties":{"pattern":{"type":"string"},"max":{"type":"integer"}},"required":["pattern"],"additionalProperties":false}`

func newGrep() *rawTool {
	return &rawTool{name: "grep", access: tool.AccessRead, schema: json.RawMessage(grepSchema)}
}

// selfChecking validates its own input, so a Set must defer to it.
type selfChecking struct{ err error }

func (s selfChecking) Info() tool.Info {
	return tool.Info{Name: "self", InputSchema: json.RawMessage(`{"type":"object"}`), Access: tool.AccessOther}
}
func (selfChecking) Call(context.Context, tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.Result{}, nil
}
func (s selfChecking) ValidateInput(json.RawMessage) error { return s.err }

func TestTypedInfersSchema(t *testing.T) {
	info := newRead().Info()
	var got map[string]any
	if err := json.Unmarshal(info.InputSchema, &got); err != nil {
		t.Fatalf("inferred schema is not JSON: %v\n%s", err, info.InputSchema)
	}
	want := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"path":   map[string]any{"type": "string", "description": "absolute path of the file to read"},
			"offset": map[string]any{"type": "integer", "description": "line to start at"},
			"limit":  map[string]any{"type": "integer"},
			"tags":   map[string]any{"type": []any{"null", "array"}, "items": map[string]any{"type": "string"}},
			"deep":   map[string]any{"type": "boolean"},
		},
		// Fields without omitempty/omitzero are required, in field order.
		"required":             []any{"path", "deep"},
		"additionalProperties": false,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("inferred schema (-want +got):\n%s", d)
	}

	// The rest of Meta is kept as given.
	info.InputSchema = nil
	wantInfo := tool.Info{Name: "read", Description: "Reads a file.", Access: tool.AccessRead, ConcurrencySafe: true}
	if d := cmp.Diff(wantInfo, info); d != "" {
		t.Errorf("Info (-want +got):\n%s", d)
	}

	spec := newRead().Info().Spec()
	if spec.Name != "read" || spec.Description != "Reads a file." || len(spec.InputSchema) == 0 {
		t.Errorf("Spec() = %+v", spec)
	}
}

func TestTypedProvidedSchemaOverridesInference(t *testing.T) {
	// Inference would require "extra" and forbid unknown keys; the provided
	// schema does neither, and adds a minLength inference cannot express.
	type in struct {
		Q     string `json:"q"`
		Extra int    `json:"extra"`
	}
	const provided = `{"type":"object","properties":{"q":{"type":"string","minLength":3}},"required":["q"]}`
	tl := tool.New(tool.Info{Name: "search", InputSchema: json.RawMessage(provided)},
		func(context.Context, tool.Env, in) (tool.Result, error) { return tool.Text(""), nil })

	if got := string(tl.Info().InputSchema); got != provided {
		t.Errorf("InputSchema = %s, want the provided %s", got, provided)
	}
	tests := []struct {
		input   string
		wantErr string
	}{
		{`{"q":"abc"}`, ""},
		{`{"q":"abc","other":1}`, ""},
		{`{"q":"ab"}`, "minLength"},
		{`{}`, "missing properties"},
	}
	for _, tt := range tests {
		checkErr(t, "ValidateInput("+tt.input+")", tl.ValidateInput(json.RawMessage(tt.input)), tt.wantErr)
	}
}

func TestTypedBadSchemaSurfacesFromValidateInput(t *testing.T) {
	run := func(context.Context, tool.Env, readInput) (tool.Result, error) { return tool.Text(""), nil }
	type uninferable struct {
		F func() `json:"f"`
	}
	tests := []struct {
		name    string
		tool    tool.Validating
		wantErr []string
	}{
		{
			name:    "not JSON",
			tool:    tool.New(tool.Info{Name: "bad", InputSchema: json.RawMessage(`{"type":`)}, run),
			wantErr: []string{"tool bad: bad input schema"},
		},
		{
			name:    "not a schema",
			tool:    tool.New(tool.Info{Name: "bad", InputSchema: json.RawMessage(`{"required":"path"}`)}, run),
			wantErr: []string{"tool bad: bad input schema", "required"},
		},
		{
			name:    "dangling $ref",
			tool:    tool.New(tool.Info{Name: "bad", InputSchema: json.RawMessage(`{"$ref":"#/$defs/missing"}`)}, run),
			wantErr: []string{"tool bad: resolve input schema", "missing"},
		},
		{
			name:    "bad pattern",
			tool:    tool.New(tool.Info{Name: "bad", InputSchema: json.RawMessage(`{"type":"object","pattern":"("}`)}, run),
			wantErr: []string{"tool bad: resolve input schema", "pattern"},
		},
		{
			name: "uninferable input type",
			tool: tool.New(tool.Info{Name: "bad"}, func(context.Context, tool.Env, uninferable) (tool.Result, error) {
				return tool.Text(""), nil
			}),
			wantErr: []string{"tool bad: infer input schema", "func"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Twice: the failure is remembered, not forgotten after the first call.
			for range 2 {
				err := tt.tool.ValidateInput(json.RawMessage(`{"path":"/a","deep":true}`))
				for _, w := range tt.wantErr {
					checkErr(t, "ValidateInput", err, w)
				}
			}
		})
	}
}

func TestTypedCall(t *testing.T) {
	type ctxKey struct{}
	var gotIn readInput
	var gotEnv tool.Env
	tl := tool.New(tool.Info{Name: "read"}, func(ctx context.Context, env tool.Env, in readInput) (tool.Result, error) {
		if ctx.Value(ctxKey{}) != "v" {
			t.Error("Run did not get the caller's context")
		}
		gotIn, gotEnv = in, env
		return tool.Text("done"), nil
	})
	ctx := context.WithValue(t.Context(), ctxKey{}, "v")
	env := tool.Env{Cwd: "/work", SessionID: "s1", ToolUseID: "toolu_1"}

	tests := []struct {
		name    string
		input   string
		want    readInput
		wantErr string
	}{
		{"full input", `{"path":"/a","offset":3,"limit":5,"tags":["x","y"],"deep":true}`, readInput{Path: "/a", Offset: 3, Limit: 5, Tags: []string{"x", "y"}, Deep: true}, ""},
		{"empty input is the zero value", ``, readInput{}, ""},
		{"empty object is the zero value", `{}`, readInput{}, ""},
		{"not JSON", `{"path":`, readInput{}, "invalid input for read"},
		{"wrong type", `{"path":5}`, readInput{}, "invalid input for read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotIn, gotEnv = readInput{Path: "unset"}, tool.Env{}
			res, err := tl.Call(ctx, env, json.RawMessage(tt.input))
			if tt.wantErr != "" {
				checkErr(t, "Call", err, tt.wantErr)
				if gotIn.Path != "unset" {
					t.Error("Run ran on input that did not decode")
				}
				return
			}
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if d := cmp.Diff(tt.want, gotIn); d != "" {
				t.Errorf("decoded input (-want +got):\n%s", d)
			}
			if gotEnv.Cwd != env.Cwd || gotEnv.SessionID != env.SessionID || gotEnv.ToolUseID != env.ToolUseID || gotEnv.Turn != env.Turn {
				t.Errorf("Run got env %+v, want %+v", gotEnv, env)
			}
			if d := cmp.Diff(tool.Text("done"), res); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
		})
	}

	// Run's own error comes back unchanged.
	boom := errors.New("disk on fire")
	failing := tool.New(tool.Info{Name: "f"}, func(context.Context, tool.Env, readInput) (tool.Result, error) {
		return tool.Result{}, boom
	})
	if _, err := failing.Call(ctx, env, nil); !errors.Is(err, boom) {
		t.Errorf("Call err = %v, want %v", err, boom)
	}
}

func TestTypedTarget(t *testing.T) {
	env := tool.Env{Cwd: "/work"}
	plain := newRead()
	var _ tool.Targeted = plain
	for _, input := range []string{`{"path":"a"}`, `not json`} {
		got, err := plain.Target(env, json.RawMessage(input))
		if got != "" || err != nil {
			t.Errorf("Target without TargetOf (%s) = %q, %v; want \"\", nil", input, got, err)
		}
	}

	targeted := newRead()
	targeted.TargetOf = func(env tool.Env, in readInput) string {
		if path.IsAbs(in.Path) {
			return in.Path
		}
		return path.Join(env.Cwd, in.Path)
	}
	tests := []struct {
		input   string
		want    string
		wantErr string
	}{
		{`{"path":"src/a.go"}`, "/work/src/a.go", ""},
		{`{"path":"/etc/passwd"}`, "/etc/passwd", ""},
		{``, "/work", ""},
		{`{"path":`, "", "invalid input for read"},
	}
	for _, tt := range tests {
		got, err := targeted.Target(env, json.RawMessage(tt.input))
		checkErr(t, "Target("+tt.input+")", err, tt.wantErr)
		if got != tt.want {
			t.Errorf("Target(%s) = %q, want %q", tt.input, got, tt.want)
		}
	}
}

func TestNewSetErrors(t *testing.T) {
	tests := []struct {
		name    string
		tools   []tool.Tool
		wantErr string
	}{
		{"duplicate name", []tool.Tool{newRead(), newGrep(), &rawTool{name: "read"}}, `two tools are named "read"`},
		{"empty name", []tool.Tool{newRead(), &rawTool{name: ""}}, "a tool has no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tool.NewSet(tt.tools...)
			checkErr(t, "NewSet", err, tt.wantErr)
			if s != nil {
				t.Errorf("NewSet returned a set along with an error")
			}
		})
	}
}

func names(ts []tool.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Info().Name)
	}
	return out
}

func TestSetKeepsOrder(t *testing.T) {
	read, grep, self := newRead(), newGrep(), selfChecking{}
	edit := &rawTool{name: "edit", access: tool.AccessEdit, schema: json.RawMessage(`{"type":"object"}`)}
	s, err := tool.NewSet(grep, read, edit, self)
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"grep", "read", "edit", "self"}
	if d := cmp.Diff(wantNames, s.Names()); d != "" {
		t.Errorf("Names (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantNames, names(s.Tools())); d != "" {
		t.Errorf("Tools (-want +got):\n%s", d)
	}
	wantSpecs := []llm.ToolSpec{grep.Info().Spec(), read.Info().Spec(), edit.Info().Spec(), self.Info().Spec()}
	if d := cmp.Diff(wantSpecs, s.Specs()); d != "" {
		t.Errorf("Specs (-want +got):\n%s", d)
	}
	if s.Len() != 4 {
		t.Errorf("Len = %d, want 4", s.Len())
	}
	if got, ok := s.Get("read"); !ok || got != tool.Tool(read) {
		t.Errorf("Get(read) = %v, %v", got, ok)
	}
	if got, ok := s.Get("nope"); ok || got != nil {
		t.Errorf("Get(nope) = %v, %v; want nil, false", got, ok)
	}

	// Tools hands out a copy: the set stays as built.
	ts := s.Tools()
	ts[0] = nil
	if d := cmp.Diff(wantNames, names(s.Tools())); d != "" {
		t.Errorf("Tools after the caller changed its copy (-want +got):\n%s", d)
	}

	empty, err := tool.NewSet()
	if err != nil || empty.Len() != 0 || len(empty.Names()) != 0 {
		t.Errorf("NewSet() = %v (len %d), %v", empty, empty.Len(), err)
	}
}

// An alias reaches its tool through Get, Validate and Filter, but the model
// is offered the tool's own name only.
func TestSetAliases(t *testing.T) {
	agent := &rawTool{name: "Agent", aliases: []string{"Task"}, access: tool.AccessOther,
		schema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`)}
	s, err := tool.NewSet(newGrep(), agent)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"grep", "Agent"}, s.Names()); d != "" {
		t.Errorf("Names (-want +got):\n%s", d)
	}
	var specNames []string
	for _, sp := range s.Specs() {
		specNames = append(specNames, sp.Name)
	}
	if d := cmp.Diff([]string{"grep", "Agent"}, specNames); d != "" || s.Len() != 2 {
		t.Errorf("Specs offer aliases (-want +got):\n%s\nLen %d", d, s.Len())
	}
	if got, ok := s.Get("Task"); !ok || got != tool.Tool(agent) {
		t.Errorf("Get(Task) = %v, %v; want the Agent tool", got, ok)
	}
	checkErr(t, "Validate(Task)", s.Validate("Task", json.RawMessage(`{"prompt":"go"}`)), "")
	checkErr(t, "Validate(Task)", s.Validate("Task", json.RawMessage(`{}`)), `"prompt"`)

	kept := s.Filter(func(t tool.Tool) bool { return t.Info().Name == "Agent" })
	if _, ok := kept.Get("Task"); !ok {
		t.Error("Filter dropped the alias of a kept tool")
	}
	dropped := s.Filter(func(t tool.Tool) bool { return t.Info().Name != "Agent" })
	if _, ok := dropped.Get("Task"); ok {
		t.Error("Filter kept the alias of a dropped tool")
	}

	tests := []struct {
		name    string
		tools   []tool.Tool
		wantErr string
	}{
		{"alias is another tool's name", []tool.Tool{newGrep(), &rawTool{name: "search", aliases: []string{"grep"}}}, `alias "grep" of search`},
		{"alias of a later tool's name", []tool.Tool{&rawTool{name: "search", aliases: []string{"grep"}}, newGrep()}, `alias "grep" of search`},
		{"alias used twice", []tool.Tool{&rawTool{name: "a", aliases: []string{"x"}}, &rawTool{name: "b", aliases: []string{"x"}}}, `alias "x" of b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tool.NewSet(tt.tools...)
			checkErr(t, "NewSet", err, tt.wantErr)
			if s != nil {
				t.Error("NewSet returned a set along with an error")
			}
		})
	}
}

func TestNilSet(t *testing.T) {
	var s *tool.Set
	if s.Tools() != nil || s.Names() != nil || s.Specs() != nil || s.Len() != 0 {
		t.Errorf("nil set: Tools %v Names %v Specs %v Len %d", s.Tools(), s.Names(), s.Specs(), s.Len())
	}
	if got, ok := s.Get("read"); ok || got != nil {
		t.Errorf("nil set Get = %v, %v", got, ok)
	}
	f := s.Filter(func(tool.Tool) bool { return true })
	if f == nil || f.Len() != 0 {
		t.Errorf("nil set Filter = %v, want an empty set", f)
	}
	checkErr(t, "nil set Validate", s.Validate("read", json.RawMessage(`{}`)), "no such tool: read")
}

func TestSetFilter(t *testing.T) {
	edit := &rawTool{name: "edit", access: tool.AccessEdit, schema: json.RawMessage(`{"type":"object"}`)}
	s, err := tool.NewSet(newGrep(), edit, newRead(), selfChecking{})
	if err != nil {
		t.Fatal(err)
	}
	reads := s.Filter(func(t tool.Tool) bool { return t.Info().Access == tool.AccessRead })
	if d := cmp.Diff([]string{"grep", "read"}, reads.Names()); d != "" {
		t.Errorf("filtered Names (-want +got):\n%s", d)
	}
	if _, ok := reads.Get("edit"); ok {
		t.Error("filtered set still has edit")
	}
	if _, ok := reads.Get("read"); !ok {
		t.Error("filtered set lost read")
	}
	checkErr(t, "filtered Validate(edit)", reads.Validate("edit", json.RawMessage(`{}`)), "no such tool: edit")
	checkErr(t, "filtered Validate(grep)", reads.Validate("grep", json.RawMessage(`{"pattern":"x"}`)), "")
	checkErr(t, "filtered Validate(grep)", reads.Validate("grep", json.RawMessage(`{}`)), "missing properties")
	if s.Len() != 4 {
		t.Errorf("Filter changed the original set: Len %d", s.Len())
	}
	if none := s.Filter(func(tool.Tool) bool { return false }); none.Len() != 0 {
		t.Errorf("Filter(false) Len = %d", none.Len())
	}
}

func TestSetValidate(t *testing.T) {
	selfErr := errors.New("self says no")
	s, err := tool.NewSet(newRead(), newGrep(), selfChecking{err: selfErr})
	if err != nil {
		t.Fatal(err)
	}
	const mismatch = "input does not match the tool's schema"
	tests := []struct {
		name    string
		tool    string
		input   string
		wantErr []string // substrings; none means success
	}{
		{"unknown tool", "nope", `{}`, []string{"no such tool: nope"}},

		{"raw: valid", "grep", `{"pattern":"x","max":3}`, nil},
		{"raw: wrong type", "grep", `{"pattern":3}`, []string{mismatch, "/properties/pattern", `has type "integer", want "string"`}},
		{"raw: missing required", "grep", `{"max":3}`, []string{mismatch, "required", `"pattern"`}},
		{"raw: empty input is an empty object", "grep", ``, []string{mismatch, "required", `"pattern"`}},
		{"raw: additional property", "grep", `{"pattern":"x","colour":"red"}`, []string{mismatch, "additional properties", `"colour"`}},
		{"raw: not JSON", "grep", `{"pattern":`, []string{"input is not valid JSON"}},
		{"raw: trailing garbage", "grep", `{"pattern":"x"} x`, []string{"input is not valid JSON"}},
		{"raw: not an object", "grep", `["x"]`, []string{mismatch, `want "object"`}},
		{"raw: null", "grep", `null`, []string{mismatch, `want "object"`}},

		{"typed: valid", "read", `{"path":"/a","deep":false}`, nil},
		{"typed: wrong type", "read", `{"path":"/a","deep":"yes"}`, []string{mismatch, "/properties/deep", `want "boolean"`}},
		{"typed: wrong item type", "read", `{"path":"/a","deep":true,"tags":[1]}`, []string{mismatch, "/properties/tags/items"}},
		{"typed: missing required", "read", `{"offset":1}`, []string{mismatch, "required", `"path"`, `"deep"`}},
		{"typed: additional property", "read", `{"path":"/a","deep":true,"file_path":"/b"}`, []string{mismatch, "additional properties", `"file_path"`}},
		{"typed: not JSON", "read", `path=/a`, []string{"input is not valid JSON"}},

		{"self-validating tool decides", "self", `{"anything":1}`, []string{selfErr.Error()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Validate(tt.tool, json.RawMessage(tt.input))
			if len(tt.wantErr) == 0 {
				checkErr(t, "Validate", err, "")
			}
			for _, w := range tt.wantErr {
				checkErr(t, "Validate", err, w)
			}
		})
	}
	if err := s.Validate("self", nil); !errors.Is(err, selfErr) {
		t.Errorf("Validate(self) = %v, want the tool's own error", err)
	}
}

// A Set compiles a hand-written tool's schema once and keeps it: changing
// what Info reports afterwards does not change what this Set accepts, while
// a new Set sees the new schema.
func TestSetCachesCompiledSchema(t *testing.T) {
	rt := &rawTool{name: "t", schema: json.RawMessage(`{"type":"object","required":["a"]}`)}
	s, err := tool.NewSet(rt)
	if err != nil {
		t.Fatal(err)
	}
	checkErr(t, "first Validate", s.Validate("t", json.RawMessage(`{"a":1}`)), "")
	checkErr(t, "first Validate", s.Validate("t", json.RawMessage(`{"b":1}`)), `"a"`)

	rt.setSchema(`{"type":"object","required":["b"],"additionalProperties":false}`)
	checkErr(t, "cached Validate", s.Validate("t", json.RawMessage(`{"a":1}`)), "")
	checkErr(t, "cached Validate", s.Validate("t", json.RawMessage(`{"b":1}`)), `"a"`)

	fresh, err := tool.NewSet(rt)
	if err != nil {
		t.Fatal(err)
	}
	checkErr(t, "fresh Validate", fresh.Validate("t", json.RawMessage(`{}`)), `"b"`)
	checkErr(t, "fresh Validate", fresh.Validate("t", json.RawMessage(`{"a":1}`)), "additional properties")
}

// A Set reads its tools' specs once, when it is built: every model call of
// every session asks for them, and they are the same each time. Specs
// hands out the Set's own slice, not a copy per call.
func TestSetBuildsSpecsOnce(t *testing.T) {
	rt := &rawTool{name: "t", schema: json.RawMessage(`{"type":"object"}`)}
	s, err := tool.NewSet(rt, newGrep())
	if err != nil {
		t.Fatal(err)
	}
	want := s.Specs()
	rt.setSchema(`{"type":"object","required":["b"]}`)
	for range 3 {
		got := s.Specs()
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("Specs changed after the Set was built (-want +got):\n%s", d)
		}
		if &got[0] != &want[0] {
			t.Fatal("Specs made a new slice: the specs are rebuilt on every call")
		}
	}
	if got := testing.AllocsPerRun(100, func() { _ = s.Specs() }); got != 0 {
		t.Errorf("Specs allocates %v times per call, want 0", got)
	}
}

// Filtering a Set builds a new one only when something is taken out: a
// pool filtered for every child session usually keeps everything. The
// result's specs and aliases follow what it kept.
func TestSetFilterKeepsTheSetWhenNothingGoes(t *testing.T) {
	agent := &rawTool{name: "Agent", aliases: []string{"Task"}, schema: json.RawMessage(`{"type":"object"}`)}
	s, err := tool.NewSet(newGrep(), agent, newRead())
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Filter(func(tool.Tool) bool { return true }); got != s {
		t.Error("Filter that keeps every tool built a new Set")
	}
	some := s.Filter(func(t tool.Tool) bool { return t.Info().Name != "grep" })
	if some == s {
		t.Fatal("Filter that drops grep returned the Set itself")
	}
	var names []string
	for _, sp := range some.Specs() {
		names = append(names, sp.Name)
	}
	if d := cmp.Diff([]string{"Agent", "read"}, names); d != "" {
		t.Errorf("filtered Specs (-want +got):\n%s", d)
	}
	if _, ok := some.Get("Task"); !ok {
		t.Error("filtered Set lost the alias of a kept tool")
	}
}

func TestSetValidateBadSchema(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		wantErr string
	}{
		{"not JSON", `{"type":`, "tool broken: bad input schema"},
		{"no schema", ``, "tool broken: bad input schema"},
		{"dangling $ref", `{"$ref":"#/$defs/x"}`, "tool broken: resolve input schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tool.NewSet(&rawTool{name: "broken", schema: json.RawMessage(tt.schema)})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				checkErr(t, "Validate", s.Validate("broken", json.RawMessage(`{}`)), tt.wantErr)
			}
		})
	}
}

// Many calls at once, on fresh tools so that the first schema compilation
// (Set cache and Typed's once) races too; run under -race.
func TestSetValidateConcurrent(t *testing.T) {
	s, err := tool.NewSet(newRead(), newGrep())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool, input string
		ok          bool
	}{
		{"grep", `{"pattern":"x"}`, true},
		{"grep", `{"pattern":1}`, false},
		{"read", `{"path":"/a","deep":true}`, true},
		{"read", `{"path":"/a"}`, false},
	}
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				c := cases[(w+i)%len(cases)]
				err := s.Validate(c.tool, json.RawMessage(c.input))
				if (err == nil) != c.ok {
					t.Errorf("Validate(%s, %s) = %v, want ok=%v", c.tool, c.input, err, c.ok)
					return
				}
				_ = s.Specs()
			}
		})
	}
	wg.Wait()
}

func TestResultHelpers(t *testing.T) {
	tests := []struct {
		name string
		got  tool.Result
		want tool.Result
	}{
		{"Text", tool.Text("all good"), tool.Result{Content: []llm.Block{llm.Text("all good")}}},
		{"Text empty", tool.Text(""), tool.Result{Content: []llm.Block{llm.Text("")}}},
		{"Errorf", tool.Errorf("file %s not found (%d tries)", "/a", 2), tool.Result{Content: []llm.Block{llm.Text("file /a not found (2 tries)")}, IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// checkErr fails unless err matches want: nil when want is "", otherwise an
// error whose text contains want.
func checkErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: unexpected error: %v", what, err)
	case want != "" && err == nil:
		t.Errorf("%s: no error, want one containing %q", what, want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("%s: error %q does not contain %q", what, err, want)
	}
}

func TestWithSharesTheSchema(t *testing.T) {
	type in struct {
		N int `json:"n" jsonschema:"a number"`
	}
	proto := tool.New(tool.Info{Name: "proto"}, func(context.Context, tool.Env, in) (tool.Result, error) { return tool.Text("proto"), nil })
	v := proto.With(tool.Info{Name: "variant", Description: "per session"}, func(_ context.Context, _ tool.Env, i in) (tool.Result, error) {
		return tool.Text(fmt.Sprint("variant ", i.N)), nil
	})
	if v.Info().Name != "variant" || v.Info().Description != "per session" || string(v.Info().InputSchema) != string(proto.Info().InputSchema) {
		t.Fatalf("info %+v", v.Info())
	}
	if err := v.ValidateInput(json.RawMessage(`{"n":"x"}`)); err == nil {
		t.Error("the shared schema does not validate")
	}
	res, err := v.Call(context.Background(), tool.Env{}, json.RawMessage(`{"n":3}`))
	if err != nil || res.Content[0].Text != "variant 3" {
		t.Errorf("call = %v, %v", res, err)
	}
}
