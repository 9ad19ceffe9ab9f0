package builtin

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cadre-dev/cadre/internal/testkit/golden"
)

// inferred encodes the schema inferred from In, as Typed would.
func inferred[In any](t *testing.T) []byte {
	t.Helper()
	s, err := jsonschema.For[In](nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestSchemasAreTheInputTypes keeps the schemas the built-in tools ship
// (schemas/*.json, embedded so that no run infers them by reflection) the
// ones their input types infer, Grep's with its tightening. After changing
// an input type, run the test with -update.
func TestSchemasAreTheInputTypes(t *testing.T) {
	for name, got := range map[string][]byte{
		"Read":      inferred[ReadInput](t),
		"Write":     inferred[WriteInput](t),
		"Edit":      inferred[EditInput](t),
		"Glob":      inferred[GlobInput](t),
		"Grep":      grepSchema(),
		"LS":        inferred[LSInput](t),
		"Bash":      inferred[BashInput](t),
		"TodoWrite": todoWriteSchema(),
		"WebFetch":  inferred[WebFetchInput](t),
	} {
		golden.Check(t, filepath.Join("schemas", strings.ToLower(name)+".json"), got)
	}
	for _, tl := range Tools(Options{}) {
		info := tl.Info()
		want, err := schemas.ReadFile("schemas/" + strings.ToLower(info.Name) + ".json")
		if err != nil || string(info.InputSchema) != string(want) {
			t.Errorf("%s offers schema %s, want schemas/%s.json (%v)", info.Name, info.InputSchema, strings.ToLower(info.Name), err)
		}
	}
}

// grepSchema is the schema inferred from GrepInput, tightened where struct
// tags cannot say enough: output_mode is an enum and -n a plain boolean.
func grepSchema() json.RawMessage {
	s, err := jsonschema.For[GrepInput](nil)
	if err != nil {
		panic(fmt.Sprintf("builtin: infer Grep schema: %v", err))
	}
	s.Properties["output_mode"].Enum = []any{grepContent, grepFiles, grepCount}
	n := s.Properties["-n"]
	n.Type, n.Types = "boolean", nil
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("builtin: encode Grep schema: %v", err))
	}
	return raw
}

// BenchmarkToolsOffered is what offering the built-in tools costs a
// process: building them and reading each one's Info (its spec).
func BenchmarkToolsOffered(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range Tools(Options{}) {
			t.Info()
		}
	}
}

// todoWriteSchema is the schema inferred from TodoWriteInput, with status
// as the enum it is.
func todoWriteSchema() json.RawMessage {
	s, err := jsonschema.For[TodoWriteInput](nil)
	if err != nil {
		panic(fmt.Sprintf("builtin: infer TodoWrite schema: %v", err))
	}
	s.Properties["todos"].Types, s.Properties["todos"].Type = nil, "array"
	s.Properties["todos"].Items.Properties["status"].Enum = []any{TodoPending, TodoInProgress, TodoCompleted}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("builtin: encode TodoWrite schema: %v", err))
	}
	return raw
}
